// ssh-keygen -M generate and -M screen: files, progress and messages as
// OpenSSH 9.2's (its logit() lines go to stderr even without -v; debug1
// lines with -v). The arithmetic lives in keygen_moduli.cpp.
#include "ssh/keygen/keygen_moduli.hpp"
#include "common/temp_name.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>

namespace longhaul {

namespace {

using namespace keygen;

void log_line(const std::string& text) { std::fprintf(stderr, "%s\r\n", text.c_str()); }

std::string ctime_now()
{
    const std::time_t t = std::time(nullptr);
    char buf[64] = {};
    ::ctime_r(&t, buf);
    return std::string(buf).substr(0, 24);
}

// Closes a FILE* unless it is stdin.
struct file_closer {
    void operator()(std::FILE* f) const noexcept
    {
        if (f != stdin)
            std::fclose(f);
    }
};
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

// OpenSSH's line buffer: the longest modulus plus its fields.
constexpr std::size_t moduli_line_buffer = 100 + 8192 + 1;

unsigned long count_lines(std::FILE* f, bool verbose)
{
    if (std::fseek(f, 0, SEEK_SET) != 0) {
        if (verbose)
            log_line("debug1: input file is not seekable");
        return ULONG_MAX;
    }
    std::vector<char> buf(moduli_line_buffer);
    unsigned long n = 0;
    while (std::fgets(buf.data(), static_cast<int>(buf.size()), f) != nullptr)
        ++n;
    std::rewind(f);
    if (verbose)
        log_line("debug1: input file has " + std::to_string(n) + " lines");
    return n;
}

unsigned long read_checkpoint(const std::string& path)
{
    file_ptr f(std::fopen(path.c_str(), "r"));
    if (!f)
        return 0;
    unsigned long line = 0;
    if (std::fscanf(f.get(), "%lu\n", &line) < 1)
        log_line("Failed to load checkpoint from '" + path + "'");
    else
        log_line("Loaded checkpoint from '" + path + "' line " + std::to_string(line));
    return line;
}

// Written to a temporary file and renamed, so that a crash leaves either
// the old line number or the new one.
void write_checkpoint(const std::string& path, unsigned long line)
{
    std::string tmp = fill_temp_template(path + ".XXXXXXXXXX");
    const int fd = ::mkstemp(tmp.data());
    if (fd == -1) {
        log_line("mkstemp(" + tmp + "): " + std::strerror(errno));
        return;
    }
    std::FILE* f = ::fdopen(fd, "w");
    if (f == nullptr) {
        log_line(std::string("write_checkpoint: fdopen: ") + std::strerror(errno));
        ::unlink(tmp.c_str());
        ::close(fd);
        return;
    }
    const bool wrote = std::fprintf(f, "%lu\n", line) > 0;
    const bool closed = std::fclose(f) == 0;
    if (!(wrote && closed && std::rename(tmp.c_str(), path.c_str()) == 0)) {
        log_line("failed to write to checkpoint file '" + path + "': " + std::strerror(errno));
        ::unlink(tmp.c_str());
    }
}

std::string format_duration(long long secs)
{
    char buf[64];
    if (secs < 60)
        std::snprintf(buf, sizeof buf, "%llds", secs);
    else if (secs < 3600)
        std::snprintf(buf, sizeof buf, "%lldm%llds", secs / 60, secs % 60);
    else
        std::snprintf(buf, sizeof buf, "%lldh%lldm", secs / 3600, (secs % 3600) / 60);
    return buf;
}

// A progress line every five minutes, as OpenSSH's screening prints one.
class screen_progress {
public:
    void line(unsigned long start, unsigned long current, unsigned long end)
    {
        const auto now = std::chrono::steady_clock::now();
        if (!started_) {
            started_ = true;
            start_ = prev_ = now;
            return;
        }
        if (now - prev_ < std::chrono::minutes(5))
            return;
        prev_ = now;
        const long long elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
        const unsigned long done = current - start;
        if (end == ULONG_MAX) {
            log_line(ctime_now() + " processed " + std::to_string(done) + " in " + format_duration(elapsed));
            return;
        }
        const unsigned long total = end - start;
        const auto eta = static_cast<long long>(static_cast<double>(elapsed) / done * (end - current));
        log_line(ctime_now() + " processed " + std::to_string(done) + " of " + std::to_string(total) + " (" +
                 std::to_string(100 * done / total) + "%) in " + format_duration(elapsed) + ", ETA " +
                 format_duration(eta));
    }

private:
    bool started_ = false;
    std::chrono::steady_clock::time_point start_, prev_;
};

} // namespace

int keygen_moduli_generate(const keygen_options&, const std::string& out_file, const std::vector<std::string>& opts)
{
    const auto g = parse_moduli_generate_options(opts);
    file_ptr out(std::fopen(out_file.c_str(), "w"));
    if (!out)
        throw keygen_exit(255, "Couldn't open modulus candidate file \"" + out_file + "\": " + std::strerror(errno));
    const std::uint32_t bits = g.bits == 0 ? moduli_default_bits : g.bits;
    const char* failed = "modulus candidate generation failed";
    if (g.memory_mb != 0 && (g.memory_mb < moduli_min_memory_mb || g.memory_mb > moduli_max_memory_mb)) {
        log_line("Invalid memory amount (min " + std::to_string(moduli_min_memory_mb) + ", max " +
                 std::to_string(moduli_max_memory_mb) + ")");
        throw keygen_exit(255, failed);
    }
    if (bits > moduli_max_bits) {
        log_line("Too many bits: " + std::to_string(bits) + " > " + std::to_string(moduli_max_bits));
        throw keygen_exit(255, failed);
    }
    if (bits < moduli_min_bits) {
        log_line("Too few bits: " + std::to_string(bits) + " < " + std::to_string(moduli_min_bits));
        throw keygen_exit(255, failed);
    }
    const std::uint32_t power = bits - 1; // q's bits; p = 2q + 1 has bits
    std::string notes;
    std::uint32_t words = moduli_sieve_words(bits, g.memory_mb, notes);
    for (std::size_t at = 0, nl; (nl = notes.find('\n', at)) != std::string::npos; at = nl + 1)
        log_line(notes.substr(at, nl - at));

    bn_ptr base(BN_new());
    if (g.start) {
        base = bn_from_hex(*g.start);
    } else if (BN_rand(base.get(), static_cast<int>(power), BN_RAND_TOP_TWO, BN_RAND_BOTTOM_ODD) == 0)
        throw keygen_exit(255, "BN_rand failed");
    BN_set_bit(base.get(), 0);

    // As OpenSSH, a window too large to allocate shrinks by 1/4 MB steps.
    std::optional<moduli_sieve> sieve;
    while (!sieve) {
        try {
            sieve.emplace(base.get(), words << 5);
        } catch (const std::bad_alloc&) {
            if (words <= (1u << 16))
                throw keygen_exit(255, "Couldn't allocate the sieve");
            words -= 1u << 16;
        }
    }
    const std::uint32_t window = words << 5;
    const std::time_t started = std::time(nullptr);
    log_line(ctime_now() + " Sieve next " + std::to_string(window * 2) + " plus " + std::to_string(power) + "-bit");
    sieve->run();
    log_line(ctime_now() + " Sieved with " + std::to_string(sieve->tries()) + " small primes in " +
             std::to_string(std::time(nullptr) - started) + " seconds");

    std::uint32_t found = 0;
    bn_ptr q(BN_new());
    for (std::uint32_t j = 0; j < window; ++j) {
        if (!sieve->survives(j))
            continue;
        BN_set_word(q.get(), 2ULL * j);
        BN_add(q.get(), q.get(), base.get());
        moduli_line m{moduli_timestamp(std::time(nullptr)), moduli_type_sophie_germain, moduli_tests_sieve,
                      sieve->tries(), power - 1, 0, bn_to_hex(q.get())};
        const std::string line = format_moduli_line(m);
        // Flushed line by line, as OpenSSH's, so a long run shows progress.
        if (std::fputs(line.c_str(), out.get()) < 0 || std::fflush(out.get()) != 0)
            throw keygen_exit(255, failed);
        ++found;
    }
    log_line(ctime_now() + " Found " + std::to_string(found) + " candidates");
    return 0;
}

int keygen_moduli_screen(const keygen_options& o, const std::string& out_file, const std::vector<std::string>& opts)
{
    const auto s = parse_moduli_screen_options(opts);
    file_ptr in(stdin);
    if (o.file && *o.file != "-") {
        in.reset(std::fopen(o.file->c_str(), "r"));
        if (!in)
            throw keygen_exit(255, "Couldn't open modulus candidate file \"" + *o.file + "\": " + std::strerror(errno));
    }
    file_ptr out(std::fopen(out_file.c_str(), "a"));
    if (!out)
        throw keygen_exit(255, "Couldn't open moduli file \"" + out_file + "\": " + std::strerror(errno));
    const std::uint32_t trials = s.trials == 0 ? moduli_default_trials : s.trials;
    const char* failed = "modulus screening failed";
    if (trials < moduli_min_trials) {
        log_line("Minimum primality trials is " + std::to_string(moduli_min_trials));
        throw keygen_exit(255, failed);
    }
    const unsigned long end_line = s.lines == 0 ? count_lines(in.get(), o.verbose) : s.start_line + s.lines;
    const std::time_t started = std::time(nullptr);
    unsigned long last = 0;
    if (s.checkpoint)
        last = read_checkpoint(*s.checkpoint);
    const unsigned long start_line = std::max(last, s.start_line);
    last = start_line;
    if (o.verbose)
        log_line(end_line == ULONG_MAX ? "debug1: process from line " + std::to_string(last) + " from pipe"
                                       : "debug1: process from line " + std::to_string(last) + " to line " +
                                             std::to_string(end_line));
    std::vector<char> buf(moduli_line_buffer);
    std::uint32_t count_in = 0, count_out = 0, count_possible = 0;
    screen_progress progress;
    char num[16];
    while (std::fgets(buf.data(), static_cast<int>(buf.size()), in.get()) != nullptr && count_in < end_line) {
        ++count_in;
        if (count_in <= last)
            continue;
        if (s.checkpoint)
            write_checkpoint(*s.checkpoint, count_in);
        progress.line(start_line, count_in, end_line);
        const auto line = parse_moduli_line(buf.data());
        if (!line)
            continue;
        const auto r = screen_moduli_line(*line, trials, s.generator);
        std::snprintf(num, sizeof num, "%10u", count_in);
        if (r.possible)
            ++count_possible;
        if (!r.safe) {
            if (o.verbose && r.verbose_reason)
                log_line("debug1: " + std::string(num) + ": " + r.reason);
            continue;
        }
        if (o.verbose) {
            log_line("debug1: " + std::string(num) + ": p is almost certainly prime");
            log_line("debug1: " + std::string(num) + ": q is almost certainly prime");
        }
        moduli_line safe = *r.safe;
        safe.timestamp = moduli_timestamp(std::time(nullptr));
        const std::string text = format_moduli_line(safe);
        if (std::fputs(text.c_str(), out.get()) < 0 || std::fflush(out.get()) != 0)
            throw keygen_exit(255, failed);
        ++count_out;
    }
    if (s.checkpoint)
        ::unlink(s.checkpoint->c_str());
    log_line(ctime_now() + " Found " + std::to_string(count_out) + " safe primes of " +
             std::to_string(count_possible) + " candidates in " + std::to_string(std::time(nullptr) - started) +
             " seconds");
    return 0;
}

} // namespace longhaul
