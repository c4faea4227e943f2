// h3probe_relay: copies IP packets between TUN devices in two network namespaces, adding one-way delay, jitter and random loss.
//
//   h3probe_relay --ns-a h3lab-cli --dev-a tun0 --ns-b h3lab-srv --dev-b tun0 --rtt-ms 50 --loss 0.03 --seed 1
//
// Prints "ready" on stdout once both devices are attached, and one line of counters on SIGTERM/SIGINT or exit.
#include "delay_line.hpp"
#include "tun_device.hpp"

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

namespace {

using h3lab::Clock;
using h3lab::DelayLine;
using h3lab::LinkCounters;
using h3lab::Nanos;

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Options {
    std::string ns_a, dev_a = "tun0", ns_b, dev_b = "tun0";
    double rtt_ms = 0, jitter_ms = 0, loss = 0;
    unsigned long long seed = 1;
    std::size_t queue_limit = 100000;
    int rt_priority = 0;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
        "h3probe_relay: %s\n"
        "usage: h3probe_relay --ns-a NS --ns-b NS [--dev-a tun0] [--dev-b tun0] [--rtt-ms 0] [--jitter-ms 0]\n"
        "                     [--loss 0..1] [--seed 1] [--queue-limit 100000] [--rt-priority 0 (SCHED_FIFO 1..99)]\n",
        why);
    std::exit(2);
}

double number(const char* flag, const char* text, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
        usage((std::string(flag) + " wants a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]").c_str());
    }
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) usage(("missing value after " + flag).c_str());
        const char* v = argv[++i];
        if (flag == "--ns-a") o.ns_a = v;
        else if (flag == "--dev-a") o.dev_a = v;
        else if (flag == "--ns-b") o.ns_b = v;
        else if (flag == "--dev-b") o.dev_b = v;
        else if (flag == "--rtt-ms") o.rtt_ms = number("--rtt-ms", v, 0, 60000);
        else if (flag == "--jitter-ms") o.jitter_ms = number("--jitter-ms", v, 0, 60000);
        else if (flag == "--loss") o.loss = number("--loss", v, 0, 1);
        else if (flag == "--seed") o.seed = static_cast<unsigned long long>(number("--seed", v, 0, 9007199254740992.0));
        else if (flag == "--queue-limit") o.queue_limit = static_cast<std::size_t>(number("--queue-limit", v, 1, 1e7));
        else if (flag == "--rt-priority") o.rt_priority = static_cast<int>(number("--rt-priority", v, 0, 99));
        else usage(("unknown flag " + flag).c_str());
    }
    if (o.ns_a.empty() || o.ns_b.empty()) usage("--ns-a and --ns-b are required");
    return o;
}

Nanos from_ms(double ms) { return Nanos(static_cast<long long>(std::llround(ms * 1e6))); }

void print_counters(const LinkCounters& ab, const LinkCounters& ba) {
    const auto side = [](const char* name, const LinkCounters& c) {
        const auto queued = c.received - c.lost - c.overflow - c.sent - c.write_errors;
        const double released = static_cast<double>(c.sent + c.write_errors);
        const double late_mean_us = released > 0 ? static_cast<double>(c.late_total.count()) / released / 1e3 : 0.0;
        std::fprintf(stdout, "%s received %llu sent %llu lost %llu overflow %llu write_errors %llu queued %llu"
            " late_mean_us %.1f late_max_us %.1f", name,
            static_cast<unsigned long long>(c.received), static_cast<unsigned long long>(c.sent),
            static_cast<unsigned long long>(c.lost), static_cast<unsigned long long>(c.overflow),
            static_cast<unsigned long long>(c.write_errors), static_cast<unsigned long long>(queued),
            late_mean_us, static_cast<double>(c.late_max.count()) / 1e3);
    };
    std::fputs("counters: ", stdout);
    side("a->b", ab);
    std::fputs("; ", stdout);
    side("b->a", ba);
    std::fputs("\n", stdout);
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
        if (::write(to, packet.data(), packet.size()) == static_cast<ssize_t>(packet.size())) ++line.counters().sent;
        else ++line.counters().write_errors;
    }
}

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

    h3lab::LinkParams params;
    params.delay = from_ms(o.rtt_ms / 2);
    params.jitter = from_ms(o.jitter_ms);
    params.loss = o.loss;
    params.queue_limit = o.queue_limit;
    // Separate random streams per direction, both fixed by --seed.
    DelayLine a_to_b(params, o.seed);
    DelayLine b_to_a(params, o.seed ^ 0x9E3779B97F4A7C15ULL);

    std::printf("ready rtt_ms %.3f jitter_ms %.3f loss %.4f seed %llu\n", o.rtt_ms, o.jitter_ms, o.loss, o.seed);
    std::fflush(stdout);

    std::vector<std::uint8_t> buf(65536);
    pollfd fds[2] = {{fd_a, POLLIN, 0}, {fd_b, POLLIN, 0}};
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
        const int ready = ::ppoll(fds, 2, wait, &during_wait);
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
        }
        const auto now = Clock::now();
        release_due(a_to_b, fd_b, now);
        release_due(b_to_a, fd_a, now);
    }

    print_counters(a_to_b.counters(), b_to_a.counters());
    ::close(fd_a);
    ::close(fd_b);
    return status;
}
