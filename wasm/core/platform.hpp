// The platform port: the only way the core reaches the world (network, clock, randomness, timers, beacon).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace h3probe {

// The fields of one PerformanceResourceTiming entry the core needs, in ms relative to the page's time origin, as
// X(C++ type, member, attribute name in the spec's IDL). This list is the only one: the struct below and the browser
// adapter that reads an entry (wasm/bindings/browser_platform.cpp) are both generated from it, so adding a field is
// one line here. https://www.w3.org/TR/resource-timing/#sec-performanceresourcetiming
//   nextHopProtocol: "h3", "h2", "http/1.1", or "" when Timing-Allow-Origin is missing
// Only the attributes the core reads are listed: each costs the page module its name and a read.
#define H3PROBE_RESOURCE_TIMING_FIELDS(X)                          \
    X(std::string, next_hop_protocol, "nextHopProtocol")           \
    X(double, start_time, "startTime")                             \
    X(double, fetch_start, "fetchStart")                           \
    X(double, domain_lookup_start, "domainLookupStart")            \
    X(double, domain_lookup_end, "domainLookupEnd")                \
    X(double, connect_start, "connectStart")                       \
    X(double, connect_end, "connectEnd")                           \
    X(double, secure_connection_start, "secureConnectionStart")    \
    X(double, request_start, "requestStart")                       \
    X(double, response_start, "responseStart")                     \
    X(double, response_end, "responseEnd")                         \
    X(double, transfer_size, "transferSize")                       \
    X(double, encoded_body_size, "encodedBodySize")

// The name of the Server-Timing metric whose description is the protocol the origin saw: the origins send
// `Server-Timing: proto;desc="HTTP/3.0"` (web/server/originRules.mjs) and the browser host reads it
// (web/src/browserHost.js); a unit test checks both against this name.
inline constexpr const char* kServerTimingProtocol = "proto";

// Every field defaults to zero (or ""), which is also what a browser reports for a field it hides.
struct ResourceTimingEntry {
#define H3PROBE_ENTRY_MEMBER(type, member, attribute) type member{};
    H3PROBE_RESOURCE_TIMING_FIELDS(H3PROBE_ENTRY_MEMBER)
#undef H3PROBE_ENTRY_MEMBER
    // The description of the entry's serverTiming metric named kServerTimingProtocol (a list in the IDL, so not in the
    // field list above; the host finds it and passes it beside the entry as serverProtocol): the protocol the origin
    // saw, e.g. "HTTP/3.0"; "" when the origin sent none.
    std::string server_protocol;
};

// What the platform reports once a request it was asked to start has ended, whichever way it ended.
struct RequestOutcome {
    enum class Status { ok, network_error, timeout, aborted };
    Status status = Status::network_error;
    int http_status = 0;
    bool redirected = false;
    double fetch_started_ms = 0;  // platform clock when fetch() was called
    double fetch_ended_ms = 0;    // platform clock when the body was read to the end (or the failure seen)
    std::optional<ResourceTimingEntry> entry;  // empty: no entry arrived before the deadline
    std::string error;                         // the platform's message on failure
};

struct RequestSpec {
    int id = 0;
    std::string url;
    double timeout_ms = 0;       // the platform aborts the fetch after this long
    double entry_wait_ms = 0;    // how long to wait for the Resource Timing entry after the body is read
};

// The object a platform callback belongs to, as a counted reference that reads null once the object is gone (its
// owner calls clear()): a callback that arrives late then does nothing. Used instead of std::weak_ptr and
// std::function, which cost KBs in the browser module (a class per lambda; the shared_ptr library base brings RTTI).
class WeakRef {
public:
    WeakRef() = default;
    explicit WeakRef(void* target) : cell_(new Cell{target, 1}) {}
    WeakRef(const WeakRef& other) : cell_(other.cell_) {
        if (cell_) ++cell_->refs;
    }
    WeakRef& operator=(WeakRef other) {
        std::swap(cell_, other.cell_);
        return *this;
    }
    ~WeakRef() {
        if (cell_ && --cell_->refs == 0) delete cell_;
    }
    void* get() const { return cell_ ? cell_->target : nullptr; }
    void clear() {
        if (cell_) cell_->target = nullptr;
    }

private:
    struct Cell {
        void* target;
        int refs;
    };
    Cell* cell_ = nullptr;
};

// A platform callback: a plain function, the object it belongs to and an id. Copyable and callable like a
// std::function; calling it does nothing once the object is gone, and an empty one tests false.
template <typename... Args>
class Callback {
public:
    using Function = void (*)(void* target, int id, Args... args);
    Callback() = default;
    Callback(WeakRef owner, Function function, int id) : owner_(std::move(owner)), function_(function), id_(id) {}
    void operator()(Args... args) const {
        if (void* target = owner_.get()) function_(target, id_, args...);
    }
    explicit operator bool() const { return function_ != nullptr; }

private:
    WeakRef owner_;
    Function function_ = nullptr;
    int id_ = 0;
};

class Platform {
public:
    using RequestDone = Callback<const RequestOutcome&>;
    using TimerFired = Callback<>;

    virtual ~Platform() = default;
    virtual double now_ms() = 0;
    virtual double random() = 0;  // uniform in [0, 1)
    // Starts a request; `done` is called exactly once, later (never from inside start_request).
    virtual void start_request(const RequestSpec& spec, RequestDone done) = 0;
    // Asks the platform to give up on a request; its `done` then reports Status::aborted (or its real end if it already ended).
    virtual void abort_request(int id) = 0;
    // Returns a handle for cancel_timer.
    virtual int set_timer(double delay_ms, TimerFired fired) = 0;
    virtual void cancel_timer(int handle) = 0;
    // Returns false if the platform could not queue the beacon. It is a run's last call to the platform, whichever
    // way the run ended (complete, deadline, stopped, error): the platform may release what it holds once it returns.
    virtual bool send_beacon(const std::string& url, const std::string& body) = 0;
};

}  // namespace h3probe
