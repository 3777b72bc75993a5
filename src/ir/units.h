// Quantities with units as users type them: "8GiB", "80GB", "25GiB/s", "1e9". GiB = 2^30 bytes,
// GB = 10^9 bytes; a bare number is bytes (or bytes per second).
#pragma once

#include <optional>
#include <string>

namespace paraplan {

/// Parses a byte size; nullopt if malformed, negative or not finite.
std::optional<double> parse_bytes(const std::string& text);
/// Parses a bandwidth in bytes per second ("25GiB/s", "100Gb/s" is not accepted: bits are
/// ambiguous); nullopt if malformed.
std::optional<double> parse_bandwidth(const std::string& text);
/// Parses a compute rate with its unit ("10TFLOP/s", "312 TFLOP/s", "1e13FLOP/s"); nullopt if
/// malformed or without a unit.
std::optional<double> parse_flops(const std::string& text);
/// "8 GiB" style rendering with the exact byte count when it is not a round number of GiB.
std::string format_bytes(double bytes);

}  // namespace paraplan
