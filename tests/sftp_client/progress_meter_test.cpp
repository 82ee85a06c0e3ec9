// OpenSSH's progress meter, line for line.
#include "ssh/sftp_client/progress_meter.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace longhaul::sftp;
using namespace std::chrono_literals;

TEST_CASE("progress meter: sizes and rates as progressmeter.c formats them")
{
    CHECK(progress_meter::format_size(0) == "   0  ");
    CHECK(progress_meter::format_size(9999) == "9999  ");
    CHECK(progress_meter::format_size(10000) == "  10KB");
    CHECK(progress_meter::format_size(1048576) == "1024KB");
    CHECK(progress_meter::format_size(100ull * 1048576) == " 100MB");
    CHECK(progress_meter::format_rate(0) == "  0.0KB");
    CHECK(progress_meter::format_rate(1000) == "  1.0KB");
    CHECK(progress_meter::format_rate(125000000) == "119.2MB");
}

TEST_CASE("progress meter: the lines it draws, the ETA, stalls and the final total")
{
    auto now = transfer_clock::time_point(std::chrono::seconds(100));
    std::vector<std::string> out;
    progress_meter m([&] { return now; }, [&](const std::string& s) { out.push_back(s); }, [] { return 80; },
                     [] { return true; });
    std::atomic<std::uint64_t> counter{0};
    m.start("file.bin", 10'000'000, &counter);
    REQUIRE(out.size() == 1);
    CHECK(out[0] == "\rfile.bin                                        0%    0     0.0KB/s   --:-- ETA");
    now += 1s;
    counter = 1'000'000;
    m.refresh();
    CHECK(out.back() == "\rfile.bin                                       10%  977KB 976.6KB/s   00:09 ETA");
    for (int i = 0; i < 5; ++i) {
        now += 1s;
        m.refresh();
    }
    CHECK(out.back().find("- stalled -") != std::string::npos);
    now += 1s;
    counter = 10'000'000;
    m.stop();
    CHECK(out[out.size() - 2] == "\rfile.bin                                      100% 9766KB   1.4MB/s   00:07    ");
    CHECK(out.back() == "\n");
}
