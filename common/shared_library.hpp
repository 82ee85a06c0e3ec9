// Loading a third-party shared library the user named (a FIDO middleware,
// a PKCS#11 module): OpenSSH's check that the file is one before dlopen
// (lib_contains_symbol), and the handle, closed when its owner goes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace longhaul {

// lib_contains_symbol's check: empty when `path` is a regular file whose
// contents include `symbol`, else the reason in OpenSSH's words. Run before
// dlopen so that a file that is no such library never has its
// constructors run in our process.
std::string check_library_file(const std::string& path, std::string_view symbol);

class shared_library {
public:
    shared_library() = default;
    // dlopen(path, RTLD_NOW); empty() with error() set when it failed.
    static shared_library open(const std::string& path);

    bool empty() const noexcept { return !handle_; }
    // The symbol's address, or nullptr with error() set.
    void* symbol(const char* name);
    // dlerror()'s words for the last failure.
    const std::string& error() const noexcept { return error_; }

private:
    struct closer {
        void operator()(void* handle) const noexcept;
    };
    std::unique_ptr<void, closer> handle_;
    std::string error_;
};

} // namespace longhaul
