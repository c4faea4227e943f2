// The lab link's settings as JSON, one format for the relay's --link flag and its control channel (docs/lab.md):
//   {"seed": 7, "up": DIRECTION, "down": DIRECTION}      up: client -> server, down: server -> client
//   DIRECTION = {"delayMs": 25, "jitterMs": 0, "reorder": false, "loss": LOSS, "rateKbps": 0, "queueMs": 100}
//   LOSS = {"model": "none"} | {"model": "bernoulli", "rate": 0.01} | {"model": "gilbert", "rate": 0.02, "meanBurst": 3}
//        | {"model": "gilbert-elliott", "p": 0.01, "r": 0.3, "lossGood": 0, "lossBad": 1}
// Every key is optional (defaults: no delay, no jitter, no loss, no bandwidth limit); unknown keys and out-of-range values
// are errors that name the key.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "delay_line.hpp"

namespace h3lab {

struct LinkSettings {
    LinkParams up;    // a -> b: the client namespace to the server namespace
    LinkParams down;  // b -> a
    std::uint64_t seed = 1;
};

class SettingsError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/** Parses and checks a settings object (JSON text). Throws SettingsError with the offending key in the message. */
LinkSettings parse_link_settings(const std::string& json_text);

/** The random seed of one direction: independent streams per direction, both fixed by the settings' seed. */
inline std::uint64_t direction_seed(std::uint64_t seed, bool down) { return down ? seed ^ 0x9E3779B97F4A7C15ULL : seed; }

}  // namespace h3lab
