#include "ssh/sftp_client/progress_meter.hpp"

#include "ssh/sftp_client/text.hpp"

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>

namespace longhaul::sftp {

namespace {

constexpr int default_winsize = 80;
constexpr int max_winsize = 512;
constexpr long stall_time = 5;
constexpr double age_factor = 0.9;
constexpr char unit[] = " KMGT";

int terminal_columns()
{
    struct winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != -1 && ws.ws_col != 0)
        return ws.ws_col;
    return 0;
}

bool foreground()
{
    return ::getpgrp() == ::tcgetpgrp(STDOUT_FILENO);
}

void write_stdout(const std::string& s)
{
    std::size_t done = 0;
    while (done < s.size()) {
        const ssize_t n = ::write(STDOUT_FILENO, s.data() + done, s.size() - done);
        if (n <= 0)
            return;
        done += std::size_t(n);
    }
}

} // namespace

std::string meter_name(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

progress_meter::progress_meter()
    : progress_meter([] { return transfer_clock::now(); }, write_stdout, terminal_columns, foreground)
{
}

progress_meter::progress_meter(clock_fn clock, write_fn write, width_fn width, can_output_fn can_output)
    : clock_(std::move(clock)), write_(std::move(write)), width_(std::move(width)), can_output_(std::move(can_output))
{
}

std::string progress_meter::format_size(std::uint64_t bytes)
{
    int i = 0;
    for (; bytes >= 10000 && unit[i] != 'T'; ++i)
        bytes = (bytes + 512) / 1024;
    return strprintf("%4llu%c%s", static_cast<unsigned long long>(bytes), unit[i], i ? "B" : " ");
}

std::string progress_meter::format_rate(std::uint64_t bytes)
{
    bytes *= 100;
    int i = 0;
    for (; bytes >= 100 * 1000 && unit[i] != 'T'; ++i)
        bytes = (bytes + 512) / 1024;
    if (i == 0) {
        ++i;
        bytes = (bytes + 512) / 1024;
    }
    return strprintf("%3llu.%1llu%c%s", static_cast<unsigned long long>((bytes + 5) / 100),
                     static_cast<unsigned long long>((bytes + 5) / 10 % 10), unit[i], i ? "B" : " ");
}

double progress_meter::seconds(transfer_clock::time_point t) const
{
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

void progress_meter::start(std::string file, std::uint64_t size, const std::atomic<std::uint64_t>* counter)
{
    start_ = last_update_ = clock_();
    file_ = std::move(file);
    counter_ = counter;
    start_pos_ = counter->load(std::memory_order_relaxed);
    end_pos_ = size;
    cur_pos_ = 0;
    stalled_ = 0;
    bytes_per_second_ = 0;
    const int cols = width_ ? width_() : 0;
    win_size_ = (cols > 0 ? std::min(cols, max_winsize) : default_winsize) + 1;
    refresh(true);
}

void progress_meter::refresh(bool force)
{
    if (counter_ == nullptr)
        return;
    const auto now = clock_();
    if (!force && now - last_update_ < std::chrono::seconds(1))
        return;
    if (can_output_ && !can_output_())
        return;
    draw(now);
}

void progress_meter::draw(transfer_clock::time_point now_tp)
{
    const std::uint64_t counter = counter_->load(std::memory_order_relaxed);
    // The first refresh measures from the start position, later ones from
    // the previous refresh (cur_pos 0 means "none yet").
    std::int64_t transferred = std::int64_t(counter) - std::int64_t(cur_pos_ != 0 ? cur_pos_ : start_pos_);
    cur_pos_ = counter;
    const double now = seconds(now_tp);
    const std::int64_t bytes_left = std::int64_t(end_pos_) - std::int64_t(cur_pos_);
    double elapsed;
    if (bytes_left > 0) {
        elapsed = now - seconds(last_update_);
    } else {
        elapsed = now - seconds(start_);
        // The true average once done.
        transferred = std::int64_t(end_pos_) - std::int64_t(start_pos_);
        bytes_per_second_ = 0;
    }
    // OpenSSH keeps these in ints.
    const int cur_speed = elapsed != 0 ? int(double(transferred) / elapsed) : int(transferred);
    if (bytes_per_second_ != 0)
        bytes_per_second_ = int(bytes_per_second_ * age_factor + cur_speed * (1.0 - age_factor));
    else
        bytes_per_second_ = cur_speed;
    last_update_ = now_tp;

    if (win_size_ < 4)
        return;
    std::string buf;
    const int file_len = win_size_ - 36;
    if (file_len > 0) {
        std::string name = file_.substr(0, std::size_t(file_len));
        name.resize(std::size_t(file_len), ' ');
        buf = name;
    }
    int percent;
    if (end_pos_ == 0 || cur_pos_ == end_pos_)
        percent = 100;
    else
        percent = int((float(cur_pos_) / float(end_pos_)) * 100);
    buf += strprintf(" %3d%% %s %s/s ", percent, format_size(cur_pos_).c_str(),
                     format_rate(std::uint64_t(std::max(0.0, bytes_per_second_))).c_str());
    if (transferred == 0)
        stalled_ = double(long(stalled_ + elapsed));
    else
        stalled_ = 0;
    if (long(stalled_) >= stall_time) {
        buf += "- stalled -";
    } else if (bytes_per_second_ == 0 && bytes_left != 0) {
        buf += "  --:-- ETA";
    } else {
        int secs = bytes_left > 0 ? int(double(bytes_left) / bytes_per_second_) : int(elapsed);
        const int hours = secs / 3600;
        secs -= hours * 3600;
        const int minutes = secs / 60;
        secs -= minutes * 60;
        if (hours != 0)
            buf += strprintf("%d:%02d:%02d", hours, minutes, secs);
        else
            buf += strprintf("  %02d:%02d", minutes, secs);
        buf += bytes_left > 0 ? " ETA" : "    ";
    }
    write_("\r" + buf);
}

void progress_meter::stop()
{
    if (counter_ == nullptr)
        return;
    if (!can_output_ || can_output_()) {
        if (counter_->load(std::memory_order_relaxed) != end_pos_ || cur_pos_ != end_pos_)
            draw(clock_());
        write_("\n");
    }
    counter_ = nullptr;
}

} // namespace longhaul::sftp
