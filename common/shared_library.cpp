#include "common/shared_library.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace longhaul {

namespace {

// A middleware library or module is a few MiB at most; the file is only
// searched for a name, but a bound keeps a huge file from being mapped whole.
constexpr long long max_library_size = 1LL << 30;

std::string dl_error()
{
    const char* e = dlerror();
    return e != nullptr ? e : "unknown error";
}

} // namespace

std::string check_library_file(const std::string& path, std::string_view symbol)
{
    const std::string where = "lib_contains_symbol: ";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return where + "open " + path + ": " + std::strerror(errno);
    struct stat st {};
    std::string why;
    if (::fstat(fd, &st) != 0)
        why = where + "fstat " + path + ": " + std::strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = where + path + " is not a regular file";
    else if (static_cast<std::uint64_t>(st.st_size) < symbol.size() || st.st_size >= max_library_size)
        why = where + path + " bad size " + std::to_string(static_cast<long long>(st.st_size));
    if (!why.empty()) {
        ::close(fd);
        return why;
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED)
        return where + "mmap " + path + ": " + std::strerror(errno);
    const bool found = ::memmem(map, size, symbol.data(), symbol.size()) != nullptr;
    ::munmap(map, size);
    return found ? std::string() : where + path + " does not contain expected string " + std::string(symbol);
}

void shared_library::closer::operator()(void* handle) const noexcept
{
    if (handle != nullptr)
        dlclose(handle);
}

shared_library shared_library::open(const std::string& path)
{
    shared_library lib;
    dlerror();
    lib.handle_.reset(dlopen(path.c_str(), RTLD_NOW));
    if (!lib.handle_)
        lib.error_ = dl_error();
    return lib;
}

void* shared_library::symbol(const char* name)
{
    if (!handle_)
        return nullptr;
    dlerror();
    void* s = dlsym(handle_.get(), name);
    if (const char* e = dlerror(); e != nullptr) {
        error_ = e;
        return nullptr;
    }
    return s;
}

} // namespace longhaul
