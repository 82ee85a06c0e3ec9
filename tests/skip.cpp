#include "tests/skip.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

std::string current_test_case;

// Remembers the name of the test case being run, for the skip log.
struct skip_listener : doctest::IReporter {
    explicit skip_listener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData& d) override { current_test_case = d.m_name; }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("longhaul_skip", 1, skip_listener);

} // namespace

namespace longhaul::test {

void record_skip(const std::string& reason, const char* file, int line)
{
    if (const char* log = std::getenv("LONGHAUL_SKIP_LOG"); log != nullptr && *log != '\0') {
        const std::string line =
            std::string(program_invocation_short_name) + ": " + current_test_case + ": " + reason + "\n";
        if (std::FILE* f = std::fopen(log, "a")) {
            std::fputs(line.c_str(), f); // one write: lines from parallel tests do not interleave
            std::fclose(f);
        }
    }
    const char* allow = std::getenv("LONGHAUL_ALLOW_SKIP");
    if (allow != nullptr && std::string_view(allow) == "1") {
        const std::string text = "skipped: " + reason;
        ADD_MESSAGE_AT(file, line, doctest::String(text.c_str()));
    } else {
        const std::string text =
            "skipped: " + reason + " (LONGHAUL_ALLOW_SKIP=1 allows skips; contrib/run-tests.sh lists them)";
        // The test case goes on (to its return): a failure, not a pass.
        ADD_FAIL_CHECK_AT(file, line, doctest::String(text.c_str()));
    }
}

} // namespace longhaul::test
