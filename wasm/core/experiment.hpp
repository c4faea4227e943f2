// The experiment state machine: gate -> pre-warm (sequential) -> two arms (parallel each) -> beacon.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "beacon.hpp"
#include "config.hpp"
#include "platform.hpp"

namespace h3probe {

class Experiment {
public:
    enum class State { idle, prewarm, arms, done };
    enum class StartResult { started, already_ran, disabled };

    // One Experiment per page load: it runs at most once.
    Experiment(Config config, Platform& platform, std::string module_version);
    ~Experiment();
    Experiment(const Experiment&) = delete;
    Experiment& operator=(const Experiment&) = delete;

    // The gate: the host page calls this when a search has completed. Only the first call starts a run, and none
    // does when the config says enabled: false or sampleRate: 0. (The per-page-load sampling draw is the loader's,
    // made before anything is downloaded; the core records the rate.)
    StartResult search_completed();
    // Ends a running run at once (host asked) and beacons what was measured, outcome "stopped".
    void stop(const std::string& reason);
    // The page was hidden: a running run stops at once and says so in its context. (Not starting a run in a hidden
    // tab is the loader's check, since a page hidden before any search may still show one later.)
    void page_hidden();
    // Gives up before starting (e.g. the remote config was invalid): one beacon with outcome "error" and the reason.
    void fail(const std::string& reason);
    void set_context(const ClientContext& context);
    // Problems met outside the core (loader, host callbacks) travel in the beacon; the first 10 are kept.
    void note_error(const std::string& error);

    State state() const { return state_; }
    // How far a run got: 0 idle, 1 pre-warm, 2 the first arm, 3 the second arm, 4 done. A host that cannot call
    // page_hidden() in time (the core in a Worker, the page on another thread) keeps the partial beacon of each step.
    int progress() const;
    // While a run is going: the beacon page_hidden() would send now (outcome "stopped", requests in flight aborted,
    // not visible throughout). Empty otherwise. Leaves the run as it was.
    std::string partial_beacon_json();
    const std::string& beacon_url() const { return config_.beacon_url; }
    const std::string& page_load_id() const { return page_load_id_; }
    // Valid once state() == done.
    const Beacon& beacon() const { return beacon_; }
    const std::string& beacon_json() const { return beacon_json_; }
    bool beacon_queued() const { return beacon_queued_; }

private:
    struct Slot {
        Phase phase;
        int idx;
        Proto origin;
        std::string base;  // the origin's URL
    };

    void start_next_prewarm();
    void start_arm(std::size_t position);
    void start(const Slot& slot);
    void on_done(int request_id, const RequestOutcome& outcome);
    void finish(const std::string& outcome, const std::string& error);
    // Fills b (its samples given) as the run ending now with `outcome` and returns its JSON.
    std::string encode(Beacon& b, const std::string& outcome, const std::string& error,
                       const ClientContext& context) const;
    static Sample aborted_sample(const Slot& slot);
    std::string request_url(const Slot& slot) const;
    std::string random_id();

    Config config_;
    Platform& platform_;
    std::string module_version_;
    std::string page_load_id_;
    std::string run_id_;
    State state_ = State::idle;
    std::vector<Slot> prewarm_;
    std::size_t prewarm_next_ = 0;
    Phase arm_order_[2] = {Phase::control, Phase::treatment};
    std::size_t arm_position_ = 0;
    std::vector<std::pair<int, Slot>> in_flight_;  // by request id, ascending (a run has at most ~100)
    int next_request_id_ = 1;
    int deadline_timer_ = -1;
    double started_ms_ = 0;
    std::vector<Sample> samples_;
    ClientContext context_;
    std::vector<std::string> errors_;
    Beacon beacon_;
    std::string beacon_json_;
    bool beacon_queued_ = false;
    // Platform callbacks hold a weak reference: one that fires after this object is gone does nothing.
    WeakRef self_{this};
};

}  // namespace h3probe
