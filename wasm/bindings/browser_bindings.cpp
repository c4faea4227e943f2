// Embind surface of the browser module: one Session class per page load, plain values in and out.
#include <memory>
#include <string>
#include <vector>

#include <emscripten/bind.h>

#include "browser_platform.hpp"
#include "experiment.hpp"

using emscripten::val;

namespace h3probe {
namespace {

// The page's config object (or the remote config, parsed by the browser's JSON.parse) as the core's config source,
// read once: keys and values are copied out, so the rules never call back into JS. A config is flat; an array, object
// or null value is of kind `other`, which every key rejects.
class ValSource : public ConfigSource {
public:
    explicit ValSource(const val& v) {
        object_ = v.typeOf().as<std::string>() == "object" && !v.isNull() &&
                  !val::global("Array").call<bool>("isArray", v);
        if (!object_) return;
        const val keys = val::global("Object").call<val>("keys", v);
        const auto n = keys["length"].as<unsigned>();
        for (unsigned i = 0; i < n; ++i) {
            Entry e;
            e.key = keys[i].as<std::string>();
            const val x = v[e.key];
            if (x.isString()) e.kind = Kind::string, e.text = x.as<std::string>();
            else if (x.isNumber()) e.kind = Kind::number, e.number = x.as<double>();
            else if (x.isTrue() || x.isFalse()) e.kind = Kind::boolean, e.flag = x.isTrue();
            entries_.push_back(std::move(e));
        }
    }
    bool is_object() const override { return object_; }
    std::vector<std::string> keys() const override {
        std::vector<std::string> out;
        for (const Entry& e : entries_) out.push_back(e.key);
        return out;
    }
    Kind kind(const char* key) const override { return find(key).kind; }
    std::string string(const char* key) const override { return find(key).text; }
    double number(const char* key) const override { return find(key).number; }
    bool boolean(const char* key) const override { return find(key).flag; }

private:
    struct Entry {
        std::string key;
        Kind kind = Kind::other;
        std::string text;
        double number = 0;
        bool flag = false;
    };
    const Entry& find(const char* key) const {
        static const Entry absent{"", Kind::absent};
        for (const Entry& e : entries_)
            if (e.key == key) return e;
        return absent;
    }

    bool object_ = false;
    std::vector<Entry> entries_;
};

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
        ConfigResult r = validate_config(ValSource(config));
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

    int progress() const { return experiment_ ? experiment_->progress() : 0; }
    std::string partialBeacon() { return experiment_ ? experiment_->partial_beacon_json() : std::string(); }
    std::string beaconUrl() const { return experiment_ ? experiment_->beacon_url() : std::string(); }
    std::string beaconJson() const { return experiment_ ? experiment_->beacon_json() : std::string(); }
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
        .function("progress", &Session::progress)
        .function("partialBeacon", &Session::partialBeacon)
        .function("beaconUrl", &Session::beaconUrl)
        .function("beaconJson", &Session::beaconJson)
        .function("pageLoadId", &Session::pageLoadId);
    emscripten::constant("version", std::string(H3PROBE_VERSION));
}
