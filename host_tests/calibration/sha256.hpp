// SHA-256 (FIPS 180-4) of a file's bytes, as `sha256sum` prints it: the frozen calibration suite's hash
// (calibration_suite_test.cpp checks families.cpp against docs/design.md) and the key of its cached truths.
#pragma once

#include <string>

namespace h3probe::calib {

// Lowercase hex digest of the bytes; of a file's contents (empty string when it cannot be read).
std::string sha256_hex(const std::string& bytes);
std::string sha256_file(const std::string& path);

}  // namespace h3probe::calib
