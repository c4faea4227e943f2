// Runs the Dropbox protocol once per page load, driven only by platform callbacks (no blocking, no Asyncify).
#include "experiment.hpp"

#include <cstdint>
#include <utility>

#include "json_writer.hpp"
#include "resource_timing.hpp"
#include "utf8_text.hpp"

namespace h3probe {

Experiment::Experiment(Config config, Platform& platform, std::string module_version)
    : config_(std::move(config)),
      platform_(platform),
      module_version_(std::move(module_version)) {
    page_load_id_ = random_id();
    // Every origin an arm asks is warmed, HTTP/3 origins first: the first answer carries Alt-Svc, so the next
    // connection to it can be QUIC. Then HTTP/2 origins, so no arm pays a TCP+TLS handshake the other does not.
    const ArmTarget arms[] = {arm_target(config_, Phase::control), arm_target(config_, Phase::treatment)};
    int idx = 0;
    for (const Proto proto : {Proto::h3, Proto::h2}) {
        const int count = proto == Proto::h3 ? config_.prewarm_h3 : config_.prewarm_h2;
        for (const ArmTarget& arm : arms) {
            if (arm.protocol != proto) continue;
            for (int i = 0; i < count; ++i) prewarm_.push_back({Phase::prewarm, idx++, proto, arm.origin});
        }
    }
}

Experiment::~Experiment() {
    self_.clear();
    if (deadline_timer_ >= 0) platform_.cancel_timer(deadline_timer_);
}

std::string Experiment::random_id() {
    // 16 hex digits from two 32-bit draws (written by hand: snprintf would link printf into the browser module).
    std::string id(16, '0');
    for (int half = 0; half < 2; ++half) {
        auto bits = static_cast<std::uint32_t>(platform_.random() * 4294967296.0);
        for (int i = 7; i >= 0; --i, bits >>= 4) id[half * 8 + i] = "0123456789abcdef"[bits & 15];
    }
    return id;
}

Experiment::StartResult Experiment::search_completed() {
    if (state_ != State::idle) return StartResult::already_ran;
    if (!config_.enabled || config_.sample_rate <= 0) {
        state_ = State::done;  // this page load will not run: the decision is final
        return StartResult::disabled;
    }
    run_id_ = random_id();
    started_ms_ = platform_.now_ms();
    const bool h3_first = config_.order == RunOrder::h3_first ||
                          (config_.order == RunOrder::random && platform_.random() < 0.5);
    if (h3_first) std::swap(arm_order_[0], arm_order_[1]);

    const auto deadline = [](void* self, int) {
        auto* e = static_cast<Experiment*>(self);
        e->deadline_timer_ = -1;
        e->finish("deadline", "run deadline passed");
    };
    deadline_timer_ = platform_.set_timer(config_.run_deadline_ms, Platform::TimerFired(self_, deadline, 0));
    state_ = State::prewarm;
    start_next_prewarm();
    return StartResult::started;
}

void Experiment::stop(const std::string& reason) {
    if (state_ == State::prewarm || state_ == State::arms) finish("stopped", reason);
}

void Experiment::page_hidden() {
    if (state_ != State::prewarm && state_ != State::arms) return;
    context_.visible_throughout = false;
    stop("page hidden");
}

void Experiment::fail(const std::string& reason) {
    if (state_ != State::idle) return;
    run_id_ = random_id();
    started_ms_ = platform_.now_ms();
    finish("error", reason);
}

// Text from the page's world is cut to the lengths the collector's decoder accepts: a beacon it would reject is lost.
void Experiment::set_context(const ClientContext& context) {
    context_ = context;
    context_.page_origin = utf8_text(context_.page_origin, kMaxPageOriginChars);
    context_.effective_type = utf8_text(context_.effective_type, kMaxEffectiveTypeChars);
}

void Experiment::note_error(const std::string& error) {
    if (errors_.size() < kMaxErrors) errors_.push_back(utf8_text(error, kMaxErrorChars));
}

void Experiment::start_next_prewarm() {
    if (prewarm_next_ < prewarm_.size()) return start(prewarm_[prewarm_next_++]);
    state_ = State::arms;
    start_arm(0);
}

void Experiment::start_arm(std::size_t position) {
    arm_position_ = position;
    if (position >= 2) return finish("complete", "");
    const Phase phase = arm_order_[position];
    const ArmTarget target = arm_target(config_, phase);
    // All requests of an arm go out together: head-of-line blocking only shows between parallel streams.
    for (int i = 0; i < config_.requests_per_arm; ++i) start({phase, i, target.protocol, target.origin});
}

std::string Experiment::request_url(const Slot& slot) const {
    // A unique URL per request defeats caches and lets the platform find this request's Resource Timing entry.
    // The index through the JSON number writer: std::to_string would link libc++'s integer formatting (its digit
    // table and code) into the browser module for this one call.
    std::string url = slot.base + config_.noop_path + "?h3probe=" + run_id_ + "-" + to_string(slot.phase) + "-";
    append_number(url, slot.idx);
    // The payload mode: the arms fetch a body of that size (the origins' rule, web/server/originRules.mjs); pre-warm
    // requests stay the no-op, which only opens the connections.
    if (config_.payload_bytes > 0 && slot.phase != Phase::prewarm) {
        url += "&bytes=";
        append_number(url, config_.payload_bytes);
    }
    return url;
}

void Experiment::start(const Slot& slot) {
    const int id = next_request_id_++;
    in_flight_.emplace_back(id, slot);
    RequestSpec spec{id, request_url(slot), config_.request_timeout_ms, config_.entry_wait_ms};
    const auto done = [](void* self, int request_id, const RequestOutcome& outcome) {
        static_cast<Experiment*>(self)->on_done(request_id, outcome);
    };
    platform_.start_request(spec, Platform::RequestDone(self_, done, id));
}

void Experiment::on_done(int request_id, const RequestOutcome& outcome) {
    auto it = in_flight_.begin();
    while (it != in_flight_.end() && it->first != request_id) ++it;
    if (it == in_flight_.end()) return;  // ended by the deadline or stop(): already recorded as aborted
    const Slot slot = it->second;
    in_flight_.erase(it);

    Sample s = sample_from_outcome(outcome);
    s.phase = slot.phase;
    s.idx = slot.idx;
    s.origin = slot.origin;
    samples_.push_back(std::move(s));

    if (state_ == State::prewarm) return start_next_prewarm();
    if (state_ == State::arms && in_flight_.empty()) start_arm(arm_position_ + 1);
}

Sample Experiment::aborted_sample(const Slot& slot) {
    Sample s;
    s.phase = slot.phase;
    s.idx = slot.idx;
    s.origin = slot.origin;
    s.result = SampleResult::aborted;
    return s;
}

int Experiment::progress() const {
    switch (state_) {
        case State::idle: return 0;
        case State::prewarm: return 1;
        case State::arms: return 2 + static_cast<int>(arm_position_);
        case State::done: return 4;
    }
    return 4;
}

std::string Experiment::partial_beacon_json() {
    if (state_ != State::prewarm && state_ != State::arms) return std::string();
    // The samples lent to the beacon and given back, without the aborted ones: a copy would cost the module's size.
    const std::size_t measured = samples_.size();
    for (const auto& [id, slot] : in_flight_) samples_.push_back(aborted_sample(slot));
    ClientContext context = context_;
    context.visible_throughout = false;
    Beacon b;
    b.samples = std::move(samples_);
    std::string json = encode(b, "stopped", "page hidden", context);
    samples_ = std::move(b.samples);
    while (samples_.size() > measured) samples_.pop_back();
    return json;
}

// One encoder call for the final and the partial beacons (two would each inline it). b.samples: the run's samples.
std::string Experiment::encode(Beacon& b, const std::string& outcome, const std::string& error,
                               const ClientContext& context) const {
    b.run_id = run_id_;
    b.page_load_id = page_load_id_;
    b.config_id = config_.config_id;
    b.module_version = module_version_;
    b.order = arm_order_[0] == Phase::control ? "h2-first" : "h3-first";
    b.arms = to_string(config_.arms);
    b.outcome = outcome;
    b.error = utf8_text(error, kMaxRunErrorChars);
    b.run_ms = platform_.now_ms() - started_ms_;
    b.sample_rate = config_.sample_rate;
    b.payload_bytes = config_.payload_bytes;
    b.context = context;
    // Not seen hidden during the run: visible throughout.
    if (!b.context.visible_throughout) b.context.visible_throughout = true;
    b.errors = errors_;
    b.summary = summarize_run(b.samples);
    return encode_beacon(b);
}

void Experiment::finish(const std::string& outcome, const std::string& error) {
    if (state_ == State::done) return;
    state_ = State::done;
    if (deadline_timer_ >= 0) platform_.cancel_timer(deadline_timer_);
    deadline_timer_ = -1;

    // Requests still in flight are recorded as aborted, so the beacon accounts for every request started.
    auto unfinished = std::move(in_flight_);
    in_flight_.clear();
    for (const auto& [id, slot] : unfinished) {
        platform_.abort_request(id);
        samples_.push_back(aborted_sample(slot));
    }
    // The run is over: nothing adds to samples_ any more.
    beacon_.samples = std::move(samples_);
    beacon_json_ = encode(beacon_, outcome, error, context_);
    beacon_queued_ = platform_.send_beacon(config_.beacon_url, beacon_json_);
}

}  // namespace h3probe
