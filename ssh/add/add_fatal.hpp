// OpenSSH's fatal() inside ssh-add's actions: thrown, and printed with its
// status by main (the agent connection closes on the way out).
#pragma once

#include <stdexcept>
#include <string>

namespace longhaul::add {

class add_fatal : public std::runtime_error {
public:
    add_fatal(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
    int status() const noexcept { return status_; }

private:
    int status_;
};

} // namespace longhaul::add
