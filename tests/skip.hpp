// Skips that never pass silently (docs/TESTING.md).
#pragma once

#include <string>

namespace longhaul::test {

// The current test case cannot check (part of) what it is for on this
// machine: appends "<binary>: <test case>: <reason>" to the file named
// by LONGHAUL_SKIP_LOG (contrib/run-tests.sh lists every entry in its
// summary) and, unless LONGHAUL_ALLOW_SKIP=1, fails the test case with the
// reason. With LONGHAUL_ALLOW_SKIP=1 the reason is printed as a message.
// (__builtin_FILE/__builtin_LINE, which GCC and clang evaluate at the call
// site, rather than std::source_location: clang 14, which
// builds the sanitizer and fuzz tree, cannot compile libstdc++ 12's.)
void record_skip(const std::string& reason, const char* file = __builtin_FILE(), int line = __builtin_LINE());

} // namespace longhaul::test

// Records the skip (see record_skip) and leaves the test case.
#define LONGHAUL_SKIP(reason)                                                                                          \
    do {                                                                                                               \
        ::longhaul::test::record_skip(reason);                                                                         \
        return;                                                                                                        \
    } while (0)
