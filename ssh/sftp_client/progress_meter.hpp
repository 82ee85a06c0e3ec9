// OpenSSH's progress meter (progressmeter.c): one line, redrawn every
// second, with the file name, percent done, bytes so far, a smoothed rate
// and the time left ("- stalled -" after 5 seconds without progress); the
// last redraw shows the total time. Shown only when stdout is a terminal
// and we are its foreground process group, as OpenSSH decides.
//
// The clock and the output are passed in, so the tests check the exact
// lines.
#pragma once

#include "ssh/sftp_client/transfer_window.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace longhaul::sftp {

class progress_meter {
public:
    using clock_fn = std::function<transfer_clock::time_point()>;
    using write_fn = std::function<void(const std::string&)>;
    using width_fn = std::function<int()>;             // terminal columns (0: unknown)
    using can_output_fn = std::function<bool()>;

    // The defaults write to stdout, ask its terminal for the width and
    // check the foreground process group.
    progress_meter();
    progress_meter(clock_fn clock, write_fn write, width_fn width, can_output_fn can_output);

    void start(std::string file, std::uint64_t size, const std::atomic<std::uint64_t>* counter);
    // Redraws when a second has passed since the last redraw (or always
    // with force). The owner calls it at least once a second.
    void refresh(bool force = false);
    void stop();
    bool active() const noexcept { return counter_ != nullptr; }

    // format_size()/format_rate() of progressmeter.c, for the tests.
    static std::string format_size(std::uint64_t bytes);
    static std::string format_rate(std::uint64_t bytes_per_second);

private:
    void draw(transfer_clock::time_point now);
    double seconds(transfer_clock::time_point t) const;

    clock_fn clock_;
    write_fn write_;
    width_fn width_;
    can_output_fn can_output_;
    std::string file_;
    const std::atomic<std::uint64_t>* counter_ = nullptr;
    transfer_clock::time_point start_{}, last_update_{};
    std::uint64_t start_pos_ = 0, end_pos_ = 0, cur_pos_ = 0;
    double stalled_ = 0;
    double bytes_per_second_ = 0;
    int win_size_ = 81;
};

// The file name the meter shows for a path (OpenSSH's
// progress_meter_basename(): the part after the last '/').
std::string meter_name(const std::string& path);

} // namespace longhaul::sftp
