// Embind surface of the browser module: one Session class per page load, plain values in and out.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include <emscripten/bind.h>
#include <nlohmann/json.hpp>

#include "browser_platform.hpp"
#include "experiment.hpp"

using emscripten::val;

namespace h3probe {
namespace {

// The page's config object as a JSON value, built directly: the browser module then links no JSON parser. A config is
// flat, so nesting is cut at a small depth (a cyclic object cannot recurse forever); the core rejects what is not flat.
nlohmann::json json_from_js(const val& v, int depth = 0) {
    if (v.isTrue() || v.isFalse()) return v.isTrue();
    if (v.isString()) return v.as<std::string>();
    if (v.isNumber()) {
        const double d = v.as<double>();
        if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9e15) return static_cast<std::int64_t>(d);
        return d;
    }
    if (v.isNull() || v.isUndefined() || depth > 3) return nullptr;
    const bool array = val::global("Array").call<bool>("isArray", v);
    nlohmann::json out = array ? nlohmann::json::array() : nlohmann::json::object();
    const val keys = val::global("Object").call<val>("keys", v);
    const auto n = keys["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
        const std::string key = keys[i].as<std::string>();
        if (array)
            out.push_back(json_from_js(v[key], depth + 1));
        else
            out[key] = json_from_js(v[key], depth + 1);
    }
    return out;
}

}  // namespace

class Session {
public:
    explicit Session(val host) : platform_(std::move(host)) {}

    // Returns the config's problems as a JS array of strings, one per problem, each naming its key; empty when the
    // config is accepted. A later call (the remote config merged over the page's) replaces an accepted config only
    // while no run has started; a rejected one changes nothing.
    val configure(val config) {
        val problems = val::array();
        if (experiment_ && experiment_->state() != Experiment::State::idle) {
            problems.call<void>("push", std::string("configure: a run has started"));
            return problems;
        }
        ConfigResult r = validate_config(json_from_js(config));
        for (const auto& e : r.errors) problems.call<void>("push", e);
        if (r.config) experiment_ = std::make_unique<Experiment>(*r.config, platform_, H3PROBE_VERSION);
        return problems;
    }

    // "started", "already_ran", "disabled" or "not_configured".
    std::string searchCompleted() {
        if (!experiment_) return "not_configured";
        switch (experiment_->search_completed()) {
            case Experiment::StartResult::started: return "started";
            case Experiment::StartResult::already_ran: return "already_ran";
            case Experiment::StartResult::disabled: return "disabled";
        }
        return "unknown";
    }

    // The one way a run ends early from the page's side. Experiment::stop() has no binding of its own: the loader
    // offers the page no stop(), and the page being hidden (visibilitychange, pagehide) is the case that needs one.
    void pageHidden() {
        if (experiment_) experiment_->page_hidden();
    }
    void fail(const std::string& reason) {
        if (experiment_) experiment_->fail(reason);
    }
    void setContext(val context) {
        if (experiment_) experiment_->set_context(context_from_js(context));
    }
    void noteError(const std::string& error) {
        if (experiment_) experiment_->note_error(error);
    }

    void onRequestDone(int id, val outcome) { platform_.deliver(id, outcome); }
    void onTimer(int handle) { platform_.fire_timer(handle); }

    std::string state() const {
        if (!experiment_) return "unconfigured";
        switch (experiment_->state()) {
            case Experiment::State::idle: return "idle";
            case Experiment::State::prewarm: return "prewarm";
            case Experiment::State::arms: return "arms";
            case Experiment::State::done: return "done";
        }
        return "unknown";
    }

    std::string beaconJson() const { return experiment_ ? experiment_->beacon_json() : std::string(); }
    bool beaconQueued() const { return experiment_ && experiment_->beacon_queued(); }
    std::string pageLoadId() const { return experiment_ ? experiment_->page_load_id() : std::string(); }

private:
    BrowserPlatform platform_;
    std::unique_ptr<Experiment> experiment_;
};

}  // namespace h3probe

EMSCRIPTEN_BINDINGS(h3probe_browser) {
    using h3probe::Session;
    emscripten::class_<Session>("Session")
        .constructor<val>()
        .function("configure", &Session::configure)
        .function("searchCompleted", &Session::searchCompleted)
        .function("pageHidden", &Session::pageHidden)
        .function("fail", &Session::fail)
        .function("setContext", &Session::setContext)
        .function("noteError", &Session::noteError)
        .function("onRequestDone", &Session::onRequestDone)
        .function("onTimer", &Session::onTimer)
        .function("state", &Session::state)
        .function("beaconJson", &Session::beaconJson)
        .function("beaconQueued", &Session::beaconQueued)
        .function("pageLoadId", &Session::pageLoadId);
    emscripten::constant("version", std::string(H3PROBE_VERSION));
}
