// The experiment state machine on the simulated platform: gate, phase order, counts, parallelism, deadline.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "experiment.hpp"
#include "sim_platform.hpp"

using namespace h3probe;
using sim::OriginModel;
using sim::SimPlatform;

namespace {
const std::string kH2 = "https://h2.lab.test";
const std::string kH3 = "https://h3.lab.test";

Config lab_config() {
    const auto r = parse_config(R"({"h2Origin":"https://h2.lab.test","h3Origin":"https://h3.lab.test"})");
    REQUIRE(r.config);
    return *r.config;
}

void add_lab_origins(SimPlatform& sim, double h2_ms = 40, double h3_ms = 30) {
    OriginModel h2;
    h2.protocol = "h2";
    h2.base_ms = h2_ms;
    OriginModel h3;
    h3.protocol = "h3";
    h3.base_ms = h3_ms;
    sim.set_origin(kH2, h2);
    sim.set_origin(kH3, h3);
}

std::vector<const Sample*> phase_samples(const Beacon& b, Phase p) {
    std::vector<const Sample*> out;
    for (const auto& s : b.samples)
        if (s.phase == p) out.push_back(&s);
    return out;
}
}  // namespace

TEST_CASE("payloadBytes: the arms ask a body of that size, pre-warm stays the no-op, the beacon says the mode") {
    SimPlatform sim;
    add_lab_origins(sim);
    Config config = lab_config();
    config.payload_bytes = 131072;
    Experiment exp(config, sim, "test");
    exp.search_completed();
    sim.run();
    const auto& started = sim.started();
    REQUIRE(started.size() == 13);
    std::set<std::string> urls;
    for (std::size_t i = 0; i < started.size(); ++i) {
        const std::string& url = started[i].spec.url;
        urls.insert(url);
        CHECK(url.find("/noop?h3probe=") != std::string::npos);
        const bool payload = url.size() > 13 && url.compare(url.size() - 13, 13, "&bytes=131072") == 0;
        CHECK_MESSAGE(payload == (i >= 3), url);  // 3 pre-warm requests, then the arms
    }
    CHECK(urls.size() == started.size());
    REQUIRE(sim.beacons().size() == 1);
    const auto decoded = decode_beacon(sim.beacons()[0].body);
    REQUIRE_MESSAGE(decoded.beacon, decoded.error);
    CHECK(decoded.beacon->payload_bytes == 131072);
}

TEST_CASE("nothing is requested before a search completes") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    sim.advance(60000);
    CHECK(sim.started().empty());
    CHECK(sim.beacons().empty());
    CHECK(exp.state() == Experiment::State::idle);
}

TEST_CASE("a run is pre-warm, then the HTTP/2 arm, then the HTTP/3 arm, then one beacon") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    CHECK(exp.search_completed() == Experiment::StartResult::started);
    sim.run();
    REQUIRE(exp.state() == Experiment::State::done);

    const auto& started = sim.started();
    REQUIRE(started.size() == 13);  // 2 + 1 pre-warm, 5 + 5 measured

    SUBCASE("pre-warm: two requests to the HTTP/3 origin, then one to the HTTP/2 origin, one after another") {
        CHECK(started[0].spec.url.rfind(kH3, 0) == 0);
        CHECK(started[1].spec.url.rfind(kH3, 0) == 0);
        CHECK(started[2].spec.url.rfind(kH2, 0) == 0);
        CHECK(started[1].at_ms > started[0].at_ms);
        CHECK(started[2].at_ms > started[1].at_ms);
    }
    SUBCASE("each arm's five requests start together, the HTTP/3 arm only after the HTTP/2 arm ended") {
        for (int i = 3; i < 8; ++i) {
            CHECK(started[i].spec.url.rfind(kH2, 0) == 0);
            CHECK(started[i].at_ms == started[3].at_ms);
        }
        for (int i = 8; i < 13; ++i) {
            CHECK(started[i].spec.url.rfind(kH3, 0) == 0);
            CHECK(started[i].at_ms == started[8].at_ms);
        }
        CHECK(started[8].at_ms > started[7].at_ms);
    }
    SUBCASE("every request has its own URL, on the no-op path") {
        std::set<std::string> urls;
        for (const auto& r : started) {
            urls.insert(r.spec.url);
            CHECK(r.spec.url.find("/noop?h3probe=") != std::string::npos);
        }
        CHECK(urls.size() == started.size());
    }
    SUBCASE("the beacon holds every sample, pre-warm marked as such, and the summary") {
        REQUIRE(sim.beacons().size() == 1);
        CHECK(sim.beacons()[0].url == "/beacon");
        const auto decoded = decode_beacon(sim.beacons()[0].body);
        REQUIRE_MESSAGE(decoded.beacon, decoded.error);
        const Beacon& b = *decoded.beacon;
        CHECK(b.outcome == "complete");
        CHECK(b.order == "h2-first");
        CHECK(b.page_load_id == exp.page_load_id());
        CHECK(phase_samples(b, Phase::prewarm).size() == 3);
        CHECK(phase_samples(b, Phase::control).size() == 5);
        CHECK(phase_samples(b, Phase::treatment).size() == 5);
        CHECK(b.summary.control.latency.n == 5);
        CHECK(b.summary.treatment.latency.n == 5);
        CHECK(b.summary.control.latency.median == doctest::Approx(40 + 0.1));
        CHECK(b.summary.treatment.latency.median == doctest::Approx(30 + 0.1));
        CHECK(*b.summary.diff_median_ms == doctest::Approx(-10));
        CHECK(exp.beacon_queued());
    }
}

TEST_CASE("only the first completed search of a page load runs the experiment") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    CHECK(exp.search_completed() == Experiment::StartResult::started);
    CHECK(exp.search_completed() == Experiment::StartResult::already_ran);
    sim.run();
    CHECK(exp.search_completed() == Experiment::StartResult::already_ran);
    sim.run();
    CHECK(sim.started().size() == 13);
    CHECK(sim.beacons().size() == 1);
}

TEST_CASE("the default pre-warm leaves both arms on warm connections") {
    SUBCASE("with the HTTP/2 origin pre-warmed, no control request pays a handshake") {
        SimPlatform sim;
        add_lab_origins(sim);
        Experiment exp(lab_config(), sim, "test");
        exp.search_completed();
        sim.run();
        for (const Sample* s : phase_samples(exp.beacon(), Phase::control)) CHECK(s->reused == true);
        for (const Sample* s : phase_samples(exp.beacon(), Phase::treatment)) CHECK(s->reused == true);
    }
    SUBCASE("without it, the control arm pays the handshake: the bias the HTTP/2 pre-warm exists to remove") {
        SimPlatform sim;
        add_lab_origins(sim, 30, 30);
        Config c = lab_config();
        c.prewarm_h2 = 0;
        Experiment exp(c, sim, "test");
        exp.search_completed();
        sim.run();
        const auto control = phase_samples(exp.beacon(), Phase::control);
        CHECK(control[0]->reused == false);
        CHECK(*exp.beacon().summary.diff_median_ms < -20);  // a fake HTTP/3 "win" of about one handshake
    }
}

TEST_CASE("order h3-first runs the HTTP/3 arm first and says so") {
    SimPlatform sim;
    add_lab_origins(sim);
    Config c = lab_config();
    c.order = RunOrder::h3_first;
    Experiment exp(c, sim, "test");
    exp.search_completed();
    sim.run();
    CHECK(sim.started()[3].spec.url.rfind(kH3, 0) == 0);
    CHECK(sim.started()[8].spec.url.rfind(kH2, 0) == 0);
    CHECK(exp.beacon().order == "h3-first");
}

TEST_CASE("order random picks per run and records the pick") {
    int h3_first = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        SimPlatform sim(seed);
        add_lab_origins(sim);
        Config c = lab_config();
        c.order = RunOrder::random;
        Experiment exp(c, sim, "test");
        exp.search_completed();
        sim.run();
        const bool first_is_h3 = sim.started()[3].spec.url.rfind(kH3, 0) == 0;
        CHECK(exp.beacon().order == (first_is_h3 ? "h3-first" : "h2-first"));
        h3_first += first_is_h3;
    }
    CHECK(h3_first > 5);
    CHECK(h3_first < 35);
}

TEST_CASE("treatment requests that fell back to h2 are recorded but excluded from the HTTP/3 arm") {
    SimPlatform sim;
    add_lab_origins(sim);
    OriginModel blocked_udp;
    blocked_udp.protocol = "h2";  // what Chromium reports when QUIC is not used
    sim.set_origin(kH3, blocked_udp);
    Experiment exp(lab_config(), sim, "test");
    exp.search_completed();
    sim.run();
    const auto& b = exp.beacon();
    CHECK(phase_samples(b, Phase::treatment).size() == 5);
    CHECK(b.summary.treatment.latency.n == 0);
    CHECK(b.summary.treatment.fallbacks == 5);
    CHECK_FALSE(b.summary.diff_median_ms.has_value());
    CHECK(b.summary.control.latency.n == 5);
}

TEST_CASE("a run that cannot finish sends a partial beacon at the deadline") {
    SimPlatform sim;
    add_lab_origins(sim);
    OriginModel hanging;
    hanging.protocol = "h3";
    hanging.hang_rate = 1;
    sim.set_origin(kH3, hanging);
    Config c = lab_config();
    c.prewarm_h3 = 0;
    c.request_timeout_ms = 60000;
    c.run_deadline_ms = 3000;
    Experiment exp(c, sim, "test");
    exp.search_completed();
    sim.run();
    REQUIRE(sim.beacons().size() == 1);
    const auto& b = exp.beacon();
    CHECK(b.outcome == "deadline");
    CHECK(sim.beacons()[0].at_ms == doctest::Approx(1000 + 3000));
    CHECK(b.summary.control.latency.n == 5);
    const auto treatment = phase_samples(b, Phase::treatment);
    REQUIRE(treatment.size() == 5);
    for (const Sample* s : treatment) CHECK(s->result == SampleResult::aborted);
    CHECK(sim.aborted().size() == 5);
}

TEST_CASE("stop() ends a running run at once with what was measured") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    exp.search_completed();
    sim.advance(5);  // the first pre-warm request is in flight
    exp.stop("page hidden");
    REQUIRE(sim.beacons().size() == 1);
    CHECK(exp.beacon().outcome == "stopped");
    CHECK(exp.beacon().error == "page hidden");
    CHECK(exp.beacon().samples.size() == 1);
    sim.run();
    CHECK(sim.started().size() == 1);  // nothing starts after the stop
    CHECK(sim.beacons().size() == 1);
}

TEST_CASE("per-request timeouts and failures are recorded and the run still completes") {
    SimPlatform sim;
    add_lab_origins(sim);
    OriginModel down;
    down.up = false;
    sim.set_origin(kH2, down);
    Experiment exp(lab_config(), sim, "test");
    exp.search_completed();
    sim.run();
    CHECK(exp.beacon().outcome == "complete");
    for (const Sample* s : phase_samples(exp.beacon(), Phase::control)) CHECK(s->result == SampleResult::network_error);
    CHECK(exp.beacon().summary.control.excluded == 5);
    CHECK(exp.beacon().summary.treatment.latency.n == 5);
}

TEST_CASE("a beacon the platform refuses is reported, not lost silently") {
    SimPlatform sim;
    add_lab_origins(sim);
    sim.set_beacon_accepted(false);
    Experiment exp(lab_config(), sim, "test");
    exp.search_completed();
    sim.run();
    CHECK(exp.state() == Experiment::State::done);
    CHECK_FALSE(exp.beacon_queued());
    CHECK_FALSE(exp.beacon_json().empty());
}

TEST_CASE("callbacks arriving after the experiment is gone do nothing") {
    SimPlatform sim;
    add_lab_origins(sim);
    {
        Experiment exp(lab_config(), sim, "test");
        exp.search_completed();
        sim.advance(5);
    }
    sim.run();  // the in-flight request completes into a destroyed experiment: must not crash
    CHECK(sim.beacons().empty());
}

TEST_CASE("enabled: false or sampleRate: 0 runs nothing, for good") {
    for (const char* extra : {R"("enabled":false)", R"("sampleRate":0)"}) {
        CAPTURE(extra);
        SimPlatform sim;
        add_lab_origins(sim);
        const auto r = parse_config(std::string(R"({"h2Origin":"https://h2.lab.test","h3Origin":"https://h3.lab.test",)") +
                                    extra + "}");
        REQUIRE(r.config);
        Experiment exp(*r.config, sim, "test");
        CHECK(exp.search_completed() == Experiment::StartResult::disabled);
        CHECK(exp.search_completed() == Experiment::StartResult::already_ran);
        sim.run();
        CHECK(sim.started().empty());
        CHECK(sim.beacons().empty());
    }
}

TEST_CASE("the beacon records the sample rate, the client context and the module's own errors") {
    SimPlatform sim;
    add_lab_origins(sim);
    Config c = lab_config();
    c.sample_rate = 0.25;
    Experiment exp(c, sim, "test");
    ClientContext ctx;
    ctx.page_origin = "https://app.example.com";
    ctx.effective_type = "4g";
    ctx.rtt_ms = 50;
    ctx.save_data = false;
    ctx.module_load_ms = 12.5;
    exp.set_context(ctx);
    exp.note_error("onTimer: boom");
    exp.search_completed();
    sim.run();
    const auto decoded = decode_beacon(sim.beacons().at(0).body);
    REQUIRE_MESSAGE(decoded.beacon, decoded.error);
    CHECK(decoded.beacon->sample_rate == doctest::Approx(0.25));
    CHECK(decoded.beacon->context.page_origin == "https://app.example.com");
    CHECK(decoded.beacon->context.effective_type == "4g");
    CHECK(*decoded.beacon->context.rtt_ms == 50);
    CHECK(decoded.beacon->context.save_data == false);
    CHECK(decoded.beacon->context.visible_throughout == true);
    CHECK(decoded.beacon->errors == std::vector<std::string>{"onTimer: boom"});
}

TEST_CASE("a page hidden mid-run stops the run and beacons what was measured") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    exp.page_hidden();  // hidden before any search: nothing to stop, and a later search may still run
    CHECK(exp.state() == Experiment::State::idle);
    exp.search_completed();
    sim.advance(150);  // pre-warm done, the control arm in flight
    exp.page_hidden();
    REQUIRE(sim.beacons().size() == 1);
    const Beacon& b = exp.beacon();
    CHECK(b.outcome == "stopped");
    CHECK(b.error == "page hidden");
    CHECK(b.context.visible_throughout == false);
    CHECK(phase_samples(b, Phase::prewarm).size() == 3);
    for (const Sample* s : phase_samples(b, Phase::control)) CHECK(s->result == SampleResult::aborted);
    sim.run();
    CHECK(sim.beacons().size() == 1);
}

TEST_CASE("the partial beacon is, byte for byte, the beacon page_hidden() would send at that moment") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    CHECK(exp.progress() == 0);
    CHECK(exp.partial_beacon_json().empty());  // no run, nothing to send
    exp.search_completed();
    CHECK(exp.progress() == 1);
    sim.advance(150);  // some requests done, others in flight
    const int progress = exp.progress();
    const std::string partial = exp.partial_beacon_json();
    CHECK(exp.progress() == progress);  // taking it changes nothing
    CHECK(partial.find(R"("result":"aborted")") != std::string::npos);
    CHECK(sim.beacons().empty());
    exp.page_hidden();
    REQUIRE(sim.beacons().size() == 1);
    CHECK(partial == exp.beacon_json());
    CHECK(exp.progress() == 4);
    CHECK(exp.partial_beacon_json().empty());
}

TEST_CASE("progress passes through each arm in order") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    exp.search_completed();
    std::vector<int> seen{exp.progress()};
    for (int t = 0; t < 2000 && exp.progress() != 4; ++t) {
        sim.advance(1);
        if (exp.progress() != seen.back()) seen.push_back(exp.progress());
    }
    CHECK(seen == std::vector<int>{1, 2, 3, 4});
}

TEST_CASE("fail() sends one error beacon with the reason and no samples, and the run never starts") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    exp.fail("remote config: sampleRate: must be a number from 0 to 1");
    exp.fail("again");
    CHECK(exp.search_completed() == Experiment::StartResult::already_ran);
    sim.run();
    REQUIRE(sim.beacons().size() == 1);
    const auto decoded = decode_beacon(sim.beacons()[0].body);
    REQUIRE(decoded.beacon);
    CHECK(decoded.beacon->outcome == "error");
    CHECK(decoded.beacon->error == "remote config: sampleRate: must be a number from 0 to 1");
    CHECK(decoded.beacon->samples.empty());
    CHECK(sim.started().empty());
}

TEST_CASE("overlong text from the page is cut so that the collector still accepts the beacon") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    ClientContext ctx;
    ctx.page_origin = "https://" + std::string(500, 'a') + ".example";
    ctx.effective_type = std::string(40, 'x');
    exp.set_context(ctx);
    exp.note_error(std::string(1000, 'e'));
    exp.fail(std::string(2000, 'r'));
    REQUIRE(sim.beacons().size() == 1);
    const auto decoded = decode_beacon(sim.beacons()[0].body);
    REQUIRE_MESSAGE(decoded.beacon, decoded.error);
    CHECK(decoded.beacon->error.size() == 500);
    CHECK(decoded.beacon->context.page_origin.size() == 200);
    CHECK(decoded.beacon->errors.at(0).size() == 300);
}

TEST_CASE("text that is not valid UTF-8 does not stop the beacon") {
    SimPlatform sim;
    add_lab_origins(sim);
    Experiment exp(lab_config(), sim, "test");
    exp.note_error(std::string(299, 'e') + "\xC3\xA9");  // the cut at 300 bytes splits the two-byte é
    exp.note_error("lone \xFF byte");
    exp.fail("page hidden \xE2\x80");                   // a truncated three-byte sequence
    REQUIRE(sim.beacons().size() == 1);
    const auto decoded = decode_beacon(sim.beacons()[0].body);
    REQUIRE_MESSAGE(decoded.beacon, decoded.error);
    CHECK(decoded.beacon->errors.at(0) == std::string(299, 'e'));  // cut before the split character
    CHECK(decoded.beacon->errors.at(1) == "lone ? byte");
    CHECK(decoded.beacon->error == "page hidden ??");
}

namespace {
// Passes every call through to the simulated platform and notes its name: the browser host releases its observer and
// timers once the beacon is sent, so nothing may reach the platform after it.
class CallLog : public Platform {
public:
    explicit CallLog(SimPlatform& sim) : sim_(sim) {}
    std::vector<std::string> calls;

    double now_ms() override { return sim_.now_ms(); }
    double random() override { return sim_.random(); }
    void start_request(const RequestSpec& spec, RequestDone done) override {
        calls.push_back("start_request");
        sim_.start_request(spec, std::move(done));
    }
    void abort_request(int id) override {
        calls.push_back("abort_request");
        sim_.abort_request(id);
    }
    int set_timer(double delay_ms, TimerFired fired) override {
        calls.push_back("set_timer");
        return sim_.set_timer(delay_ms, std::move(fired));
    }
    void cancel_timer(int handle) override {
        calls.push_back("cancel_timer");
        sim_.cancel_timer(handle);
    }
    bool send_beacon(const std::string& url, const std::string& body) override {
        calls.push_back("send_beacon");
        return sim_.send_beacon(url, body);
    }

private:
    SimPlatform& sim_;
};
}  // namespace

TEST_CASE("the beacon is a run's last call to the platform, however the run ends") {
    SimPlatform sim;
    add_lab_origins(sim);
    CallLog log(sim);
    Config c = lab_config();
    {
        std::unique_ptr<Experiment> exp;
        SUBCASE("complete") {
            exp = std::make_unique<Experiment>(c, log, "test");
            exp->search_completed();
            sim.run();
            CHECK(exp->beacon().outcome == "complete");
        }
        SUBCASE("deadline, with requests in flight") {
            OriginModel hanging;
            hanging.protocol = "h3";
            hanging.hang_rate = 1;
            sim.set_origin(kH3, hanging);
            c.request_timeout_ms = 60000;
            c.run_deadline_ms = 3000;
            exp = std::make_unique<Experiment>(c, log, "test");
            exp->search_completed();
            sim.run();
            CHECK(exp->beacon().outcome == "deadline");
        }
        SUBCASE("stopped: the page was hidden") {
            exp = std::make_unique<Experiment>(c, log, "test");
            exp->search_completed();
            sim.advance(5);
            exp->page_hidden();
            sim.run();
            CHECK(exp->beacon().outcome == "stopped");
        }
        SUBCASE("failed before starting") {
            exp = std::make_unique<Experiment>(c, log, "test");
            exp->fail("remote config: not valid JSON");
            sim.run();
            CHECK(exp->beacon().outcome == "error");
        }
        exp.reset();  // the Session drops the experiment with the page: its destructor must not reach the platform
    }
    REQUIRE_FALSE(log.calls.empty());
    CHECK(log.calls.back() == "send_beacon");
    CHECK(std::count(log.calls.begin(), log.calls.end(), "send_beacon") == 1);
}

namespace {
// Both arms on one protocol: control on `first`, treatment on a second origin of the same kind.
Config aa_config(const char* arms, const std::string& first, const std::string& second) {
    const auto r = parse_config(std::string(R"({"arms":")") + arms + R"(","h2Origin":")" + kH2 + R"(","h3Origin":")" +
                                kH3 + R"(","aaOrigin":")" + second + R"("})");
    REQUIRE_MESSAGE(r.config, (r.errors.empty() ? std::string() : r.errors[0]));
    CHECK(arm_target(*r.config, Phase::control).origin == first);
    return *r.config;
}

void add_origin(SimPlatform& sim, const std::string& origin, const char* protocol, double ms) {
    OriginModel m;
    m.protocol = protocol;
    m.base_ms = ms;
    sim.set_origin(origin, m);
}

bool asks(const sim::StartedRequest& r, const std::string& origin) { return r.spec.url.rfind(origin + "/", 0) == 0; }
}  // namespace

TEST_CASE("an h3-h3 A/A run warms both HTTP/3 origins twice, then runs each arm on its own origin over h3") {
    const std::string kH3b = "https://h3b.lab.test";
    SimPlatform sim;
    add_lab_origins(sim);
    add_origin(sim, kH3b, "h3", 30);
    Experiment exp(aa_config("h3-h3", kH3, kH3b), sim, "test");
    exp.search_completed();
    sim.run();
    const auto& started = sim.started();
    REQUIRE(started.size() == 14);  // 2 + 2 pre-warm, 5 + 5 measured
    CHECK(asks(started[0], kH3));
    CHECK(asks(started[1], kH3));
    CHECK(asks(started[2], kH3b));
    CHECK(asks(started[3], kH3b));
    for (int i = 1; i < 4; ++i) CHECK(started[i].at_ms > started[i - 1].at_ms);
    for (int i = 4; i < 9; ++i) CHECK(asks(started[i], kH3));
    for (int i = 9; i < 14; ++i) CHECK(asks(started[i], kH3b));
    for (const auto& r : started) CHECK_FALSE(asks(r, kH2));

    const Beacon& b = exp.beacon();
    CHECK(b.arms == "h3-h3");
    for (const Sample& s : b.samples) CHECK(s.origin == Proto::h3);
    for (const Sample* s : phase_samples(b, Phase::control)) CHECK(s->reused == true);
    for (const Sample* s : phase_samples(b, Phase::treatment)) CHECK(s->reused == true);
    CHECK(b.summary.control.latency.n == 5);
    CHECK(b.summary.treatment.latency.n == 5);
    CHECK(*b.summary.diff_median_ms == doctest::Approx(0));
    const auto decoded = decode_beacon(sim.beacons().at(0).body);
    REQUIRE_MESSAGE(decoded.beacon, decoded.error);
    CHECK(decoded.beacon->arms == "h3-h3");
}

TEST_CASE("an h2-h2 A/A run warms both HTTP/2 origins once and never asks the HTTP/3 origin") {
    const std::string kH2b = "https://h2b.lab.test";
    SimPlatform sim;
    add_lab_origins(sim);
    add_origin(sim, kH2b, "h2", 40);
    Config c = aa_config("h2-h2", kH2, kH2b);
    c.order = RunOrder::h3_first;
    Experiment exp(c, sim, "test");
    exp.search_completed();
    sim.run();
    const auto& started = sim.started();
    REQUIRE(started.size() == 12);  // 1 + 1 pre-warm, 5 + 5 measured
    CHECK(asks(started[0], kH2));
    CHECK(asks(started[1], kH2b));
    // Treatment first: its origin is the second HTTP/2 origin.
    for (int i = 2; i < 7; ++i) CHECK(asks(started[i], kH2b));
    for (int i = 7; i < 12; ++i) CHECK(asks(started[i], kH2));
    for (const auto& r : started) CHECK_FALSE(asks(r, kH3));
    const Beacon& b = exp.beacon();
    CHECK(b.arms == "h2-h2");
    CHECK(b.order == "h3-first");
    for (const Sample& s : b.samples) CHECK(s.origin == Proto::h2);
    for (const Sample& s : b.samples)
        if (s.phase != Phase::prewarm) CHECK(s.reused == true);
    CHECK(b.summary.control.latency.n == 5);
    CHECK(b.summary.treatment.latency.n == 5);
}
