// h3probe_relay: copies IP packets between TUN devices in two network namespaces through a per-direction link model
// (bandwidth limit with a queue, bursty loss, delay, jitter; lab/relay/delay_line.hpp), whose settings change on the fly.
//
//   h3probe_relay --ns-a h3lab-cli --ns-b h3lab-srv --link '{"seed":1,"up":{"delayMs":25},"down":{"delayMs":25}}'
//
// stdout carries one JSON object per line: {"ready":true} once both devices are attached; one answer per control
// command read on stdin ({"set": SETTINGS} or {"counters": true}: {"ok":true,"counters":{"up":…,"down":…}} for the
// period the command ends, or {"ok":false,"error":…} with the settings unchanged); {"final":true,"counters":…} (totals)
// on SIGTERM/SIGINT or exit.
#include "delay_line.hpp"
#include "link_settings.hpp"
#include "tun_device.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using h3lab::Clock;
using h3lab::DelayLine;
using h3lab::LinkCounters;
using h3lab::Nanos;

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Options {
    std::string ns_a, dev_a = "tun0", ns_b, dev_b = "tun0";
    std::string link = "{}";
    int rt_priority = 0;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
        "h3probe_relay: %s\n"
        "usage: h3probe_relay --ns-a NS --ns-b NS [--dev-a tun0] [--dev-b tun0] [--link JSON] [--rt-priority 0 (SCHED_FIFO 1..99)]\n"
        "       h3probe_relay --check-link JSON   (checks link settings, prints ok or the error, exits 0 or 2)\n"
        "  --link: the first link settings (lab/relay/link_settings.hpp, docs/lab.md); later ones come on stdin, one JSON per line:\n"
        "  {\"set\": SETTINGS} or {\"counters\": true}; each is answered on stdout with the counters of the period it ends.\n",
        why);
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) usage(("missing value after " + flag).c_str());
        const char* v = argv[++i];
        if (flag == "--check-link") {
            // Checks settings and exits: 0 and "ok", or 2 and the error (the lab's profile validation asks this).
            try {
                h3lab::parse_link_settings(v);
            } catch (const h3lab::SettingsError& e) {
                std::fprintf(stdout, "%s\n", e.what());
                std::exit(2);
            }
            std::puts("ok");
            std::exit(0);
        }
        if (flag == "--ns-a") o.ns_a = v;
        else if (flag == "--dev-a") o.dev_a = v;
        else if (flag == "--ns-b") o.ns_b = v;
        else if (flag == "--dev-b") o.dev_b = v;
        else if (flag == "--link") o.link = v;
        else if (flag == "--rt-priority") {
            char* end = nullptr;
            const long p = std::strtol(v, &end, 10);
            if (end == v || *end != '\0' || p < 0 || p > 99) usage("--rt-priority wants an integer from 0 to 99");
            o.rt_priority = static_cast<int>(p);
        } else usage(("unknown flag " + flag).c_str());
    }
    if (o.ns_a.empty() || o.ns_b.empty()) usage("--ns-a and --ns-b are required");
    return o;
}

nlohmann::json counters_json(const LinkCounters& c, std::size_t queued) {
    const double released = static_cast<double>(c.sent + c.write_errors);
    const double late_mean_us = released > 0 ? static_cast<double>(c.late_total.count()) / released / 1e3 : 0.0;
    return {{"received", c.received}, {"sent", c.sent}, {"lost", c.lost}, {"loss_bursts", c.loss_bursts},
            {"overflow", c.overflow}, {"write_errors", c.write_errors}, {"queued", queued}, {"bytes_sent", c.bytes_sent},
            {"late_mean_us", std::round(late_mean_us * 10) / 10},
            {"late_max_us", std::round(static_cast<double>(c.late_max.count()) / 100) / 10}};
}

void emit(const nlohmann::json& line) {
    std::fputs((line.dump() + "\n").c_str(), stdout);
    std::fflush(stdout);
}

// Reads every packet waiting on `from` (non-blocking) into `line`. Returns false on a fatal read error.
bool drain(int from, DelayLine& line, std::vector<std::uint8_t>& buf) {
    for (int i = 0; i < 256; ++i) {  // bounded, so one busy direction cannot starve the other's departures
        const ssize_t n = ::read(from, buf.data(), buf.size());
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return true;
            std::fprintf(stderr, "h3probe_relay: read: %s\n", std::strerror(errno));
            return false;
        }
        if (n == 0) return true;
        // Time-stamped after the read, so the delay counts from when the packet left the sender's stack.
        line.push(std::vector<std::uint8_t>(buf.begin(), buf.begin() + n), Clock::now());
    }
    return true;
}

void release_due(DelayLine& line, int to, Clock::time_point now) {
    std::vector<std::uint8_t> packet;
    while (line.pop_due(now, packet)) {
        // A TUN write hands the packet to the kernel stack at once; it only fails if the device went away.
        if (::write(to, packet.data(), packet.size()) == static_cast<ssize_t>(packet.size())) {
            ++line.counters().sent;
            line.counters().bytes_sent += packet.size();
        } else {
            ++line.counters().write_errors;
        }
    }
}

// The control channel: the link's two directions, the running totals, and what one command line does.
struct Link {
    DelayLine up{h3lab::LinkParams{}, 1};
    DelayLine down{h3lab::LinkParams{}, 1};
    LinkCounters total_up, total_down;

    void apply(const h3lab::LinkSettings& s) {
        up.configure(s.up, h3lab::direction_seed(s.seed, false));
        down.configure(s.down, h3lab::direction_seed(s.seed, true));
    }
    // Ends the current period: its counters as JSON (packets still queued stay in the next period's lines).
    nlohmann::json end_period() {
        const LinkCounters u = up.take_counters(), d = down.take_counters();
        h3lab::accumulate(total_up, u);
        h3lab::accumulate(total_down, d);
        return {{"up", counters_json(u, up.size())}, {"down", counters_json(d, down.size())}};
    }
    nlohmann::json command(const std::string& text) {
        nlohmann::json cmd;
        try {
            cmd = nlohmann::json::parse(text);
        } catch (const nlohmann::json::parse_error& e) {
            return {{"ok", false}, {"error", std::string("control: not JSON: ") + e.what()}};
        }
        if (cmd.is_object() && cmd.size() == 1 && cmd.contains("set")) {
            try {
                const auto settings = h3lab::parse_link_settings(cmd.at("set").dump());
                auto counters = end_period();
                apply(settings);
                return {{"ok", true}, {"counters", counters}};
            } catch (const h3lab::SettingsError& e) {
                return {{"ok", false}, {"error", e.what()}};  // the link keeps its settings
            }
        }
        if (cmd.is_object() && cmd.size() == 1 && cmd.contains("counters")) return {{"ok", true}, {"counters", end_period()}};
        return {{"ok", false}, {"error", "control: expected {\"set\": SETTINGS} or {\"counters\": true}"}};
    }
};

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);

    // Signals stay blocked except inside ppoll, so a SIGTERM can never slip in between the flag check and the wait.
    sigset_t blocked, during_wait;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGHUP);
    sigprocmask(SIG_BLOCK, &blocked, &during_wait);
    sigdelset(&during_wait, SIGTERM);
    sigdelset(&during_wait, SIGINT);
    sigdelset(&during_wait, SIGHUP);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);

    Link link;
    try {
        link.apply(h3lab::parse_link_settings(o.link));
    } catch (const h3lab::SettingsError& e) {
        usage(e.what());
    }
    DelayLine& a_to_b = link.up;
    DelayLine& b_to_a = link.down;

    int fd_a = -1, fd_b = -1;
    try {
        fd_a = h3lab::open_tun_in_namespace(o.ns_a, o.dev_a);
        fd_b = h3lab::open_tun_in_namespace(o.ns_b, o.dev_b);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "h3probe_relay: %s\n", e.what());
        return 1;
    }

    // The default 50 us timer slack would be added to every departure; 1 ns asks the kernel to wake us on time.
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (o.rt_priority > 0) {
        sched_param sp{};
        sp.sched_priority = o.rt_priority;
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
            std::fprintf(stderr, "h3probe_relay: SCHED_FIFO not granted (%s); running at normal priority\n", std::strerror(errno));
        }
    }

    emit({{"ready", true}});

    std::vector<std::uint8_t> buf(65536);
    // stdin is the control channel; at its end (the lab closed it, or it is /dev/null) the relay goes on with its settings.
    const int flags = ::fcntl(STDIN_FILENO, F_GETFL);
    ::fcntl(STDIN_FILENO, F_SETFL, flags | O_NONBLOCK);
    pollfd fds[3] = {{fd_a, POLLIN, 0}, {fd_b, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    std::string control;
    int status = 0;
    while (!g_stop) {
        timespec timeout{};
        timespec* wait = nullptr;  // nothing queued: sleep until a packet or a signal
        if (!a_to_b.empty() || !b_to_a.empty()) {
            auto next = Clock::time_point::max();
            if (!a_to_b.empty()) next = std::min(next, a_to_b.next_departure());
            if (!b_to_a.empty()) next = std::min(next, b_to_a.next_departure());
            const auto left = std::max(Nanos(0), std::chrono::duration_cast<Nanos>(next - Clock::now()));
            timeout.tv_sec = static_cast<time_t>(left.count() / 1000000000);
            timeout.tv_nsec = static_cast<long>(left.count() % 1000000000);
            wait = &timeout;
        }
        const int ready = ::ppoll(fds, fds[2].fd >= 0 ? 3 : 2, wait, &during_wait);
        if (ready < 0 && errno != EINTR) {
            std::fprintf(stderr, "h3probe_relay: ppoll: %s\n", std::strerror(errno));
            status = 1;
            break;
        }
        if (ready > 0) {
            if (fds[0].revents & (POLLERR | POLLNVAL)) { std::fprintf(stderr, "h3probe_relay: device a failed\n"); status = 1; break; }
            if (fds[1].revents & (POLLERR | POLLNVAL)) { std::fprintf(stderr, "h3probe_relay: device b failed\n"); status = 1; break; }
            if ((fds[0].revents & POLLIN) && !drain(fd_a, a_to_b, buf)) { status = 1; break; }
            if ((fds[1].revents & POLLIN) && !drain(fd_b, b_to_a, buf)) { status = 1; break; }
            if (fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
                char chunk[4096];
                const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
                if (n > 0) control.append(chunk, static_cast<std::size_t>(n));
                else if (n == 0 || (errno != EAGAIN && errno != EINTR)) fds[2].fd = -1;
                for (std::size_t nl; (nl = control.find('\n')) != std::string::npos;) {
                    const std::string line = control.substr(0, nl);
                    control.erase(0, nl + 1);
                    if (line.find_first_not_of(" \t\r") != std::string::npos) emit(link.command(line));
                }
                if (control.size() > 1 << 20) { emit({{"ok", false}, {"error", "control: line too long"}}); control.clear(); }
            }
        }
        const auto now = Clock::now();
        release_due(a_to_b, fd_b, now);
        release_due(b_to_a, fd_a, now);
    }

    link.end_period();
    emit({{"final", true}, {"counters", {{"up", counters_json(link.total_up, a_to_b.size())},
                                         {"down", counters_json(link.total_down, b_to_a.size())}}}});
    ::close(fd_a);
    ::close(fd_b);
    return status;
}
