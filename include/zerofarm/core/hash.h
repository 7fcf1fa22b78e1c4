#pragma once
// A fast 64-bit hash of a byte string (feature planes): keys of the shared
// evaluation cache. Not cryptographic; equal bytes give equal hashes in every
// process and build (no per-process seed).
#include <cstddef>
#include <cstdint>

namespace zerofarm {

uint64_t HashBytes(const uint8_t* data, size_t n);

}  // namespace zerofarm
