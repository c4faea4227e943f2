// JSON settings of the lab link (see link_settings.hpp).
#include "link_settings.hpp"

#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>

namespace h3lab {
namespace {

using nlohmann::json;

void only_keys(const json& obj, const std::string& where, std::initializer_list<const char*> known) {
    if (!obj.is_object()) throw SettingsError(where + ": expected a JSON object");
    for (const auto& item : obj.items()) {
        bool ok = false;
        for (const char* k : known) ok = ok || item.key() == k;
        if (!ok) {
            std::string list;
            for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
            throw SettingsError(where + ": unknown key \"" + item.key() + "\" (known: " + list + ")");
        }
    }
}

double number(const json& obj, const std::string& where, const char* key, double lo, double hi, double fallback) {
    if (!obj.contains(key)) return fallback;
    const json& v = obj.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi) {
        throw SettingsError(where + "." + key + ": expected a number from " + json(lo).dump() + " to " + json(hi).dump() +
                            ", got " + v.dump());
    }
    return v.get<double>();
}

Nanos from_ms(double ms) { return Nanos(static_cast<long long>(std::llround(ms * 1e6))); }

LossModel parse_loss(const json& obj, const std::string& where) {
    if (!obj.is_object() || !obj.contains("model") || !obj.at("model").is_string()) {
        throw SettingsError(where + ": expected {\"model\": \"none\" | \"bernoulli\" | \"gilbert\" | \"gilbert-elliott\", ...}");
    }
    const std::string model = obj.at("model").get<std::string>();
    if (model == "none") {
        only_keys(obj, where, {"model"});
        return LossModel::none();
    }
    if (model == "bernoulli") {
        only_keys(obj, where, {"model", "rate"});
        return LossModel::bernoulli(number(obj, where, "rate", 0, 0.99, 0));
    }
    if (model == "gilbert") {
        only_keys(obj, where, {"model", "rate", "meanBurst"});
        const double rate = number(obj, where, "rate", 0, 0.99, 0);
        const double burst = number(obj, where, "meanBurst", 1, 1e6, 1);
        try {
            return LossModel::gilbert(rate, burst);
        } catch (const std::invalid_argument& e) {
            throw SettingsError(where + ": " + e.what());
        }
    }
    if (model == "gilbert-elliott") {
        only_keys(obj, where, {"model", "p", "r", "lossGood", "lossBad"});
        LossModel m{number(obj, where, "p", 0, 1, 0), number(obj, where, "r", 0, 1, 1), number(obj, where, "lossGood", 0, 1, 0),
                    number(obj, where, "lossBad", 0, 1, 1)};
        if (m.p > 0 && m.r <= 0) throw SettingsError(where + ".r: must be above 0 when p is (the chain would stay in Bad)");
        if (m.loss_rate() >= 1.0) throw SettingsError(where + ": loses every packet");
        return m;
    }
    throw SettingsError(where + ".model: unknown model \"" + model + "\" (none, bernoulli, gilbert, gilbert-elliott)");
}

LinkParams parse_direction(const json& obj, const std::string& where) {
    only_keys(obj, where, {"delayMs", "jitterMs", "reorder", "loss", "rateKbps", "queueMs", "queueBytes"});
    LinkParams p;
    p.delay = from_ms(number(obj, where, "delayMs", 0, 30000, 0));
    p.jitter = from_ms(number(obj, where, "jitterMs", 0, 30000, 0));
    if (obj.contains("reorder")) {
        if (!obj.at("reorder").is_boolean()) throw SettingsError(where + ".reorder: expected true or false");
        p.reorder = obj.at("reorder").get<bool>();
    }
    if (obj.contains("loss")) p.loss = parse_loss(obj.at("loss"), where + ".loss");
    const double kbps = number(obj, where, "rateKbps", 0, 1e8, 0);
    p.rate_bps = kbps * 1000.0;
    if (obj.contains("queueMs") && obj.contains("queueBytes")) throw SettingsError(where + ": give queueMs or queueBytes, not both");
    if (kbps == 0 && (obj.contains("queueMs") || obj.contains("queueBytes"))) {
        throw SettingsError(where + ": a queue needs a bandwidth limit (rateKbps above 0)");
    }
    if (kbps > 0) {
        // The queue holds at least one full-size packet (1500 bytes), or nothing could pass.
        const double bytes = obj.contains("queueBytes") ? number(obj, where, "queueBytes", 1500, 1e9, 0)
                                                        : std::max(1500.0, number(obj, where, "queueMs", 1, 10000, 100) * kbps / 8.0);
        p.queue_bytes = static_cast<std::size_t>(bytes);
    }
    return p;
}

}  // namespace

LinkSettings parse_link_settings(const std::string& json_text) {
    json root;
    try {
        root = json::parse(json_text);
    } catch (const json::parse_error& e) {
        throw SettingsError(std::string("link settings: not JSON: ") + e.what());
    }
    only_keys(root, "link", {"seed", "up", "down"});
    LinkSettings s;
    s.seed = static_cast<std::uint64_t>(number(root, "link", "seed", 0, 9007199254740991.0, 1));
    if (root.contains("seed") && std::floor(root.at("seed").get<double>()) != root.at("seed").get<double>()) {
        throw SettingsError("link.seed: expected an integer");
    }
    if (root.contains("up")) s.up = parse_direction(root.at("up"), "link.up");
    if (root.contains("down")) s.down = parse_direction(root.at("down"), "link.down");
    return s;
}

}  // namespace h3lab
