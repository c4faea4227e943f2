#include "comparability.hpp"

namespace h3probe {

std::vector<UnequalExclusion> unequal_exclusions(const GroupReport& g) {
    std::size_t requests[2] = {0, 0};
    for (int arm = 0; arm < 2; ++arm) {
        for (int c = 0; c < kRequestClassCount; ++c) {
            if (static_cast<RequestClass>(c) != RequestClass::prewarm) requests[arm] += g.classes[arm][c];
        }
    }
    std::vector<UnequalExclusion> out;
    if (requests[0] == 0 || requests[1] == 0) return out;
    for (int c = 0; c < kRequestClassCount; ++c) {
        const auto cls = static_cast<RequestClass>(c);
        if (is_usable(cls) || cls == RequestClass::prewarm || cls == RequestClass::fallback) continue;
        const std::size_t a = g.classes[0][c], b = g.classes[1][c];
        const double gap = static_cast<double>(b) / static_cast<double>(requests[1]) -
                           static_cast<double>(a) / static_cast<double>(requests[0]);
        const std::size_t more = a > b ? a - b : b - a;
        if ((gap > kUnequalExclusionShare || gap < -kUnequalExclusionShare) && more >= kUnequalExclusionMinRequests) {
            out.push_back({cls, a, b, requests[0], requests[1]});
        }
    }
    return out;
}

}  // namespace h3probe
