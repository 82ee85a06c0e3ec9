// result<T>: a value or an errc. GCC 12 has std::expected but clang 14 (the
// libFuzzer compiler) cannot compile libstdc++'s <expected>, so the project
// carries this small equivalent.
#pragma once

#include "common/errc.hpp"

#include <cassert>
#include <utility>
#include <variant>

namespace longhaul {

template <class T>
class [[nodiscard]] result {
public:
    result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    result(errc e) : v_(std::in_place_index<1>, e) { assert(e != errc::ok); }

    bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    T& value() & { assert(has_value()); return *std::get_if<0>(&v_); }
    const T& value() const& { assert(has_value()); return *std::get_if<0>(&v_); }
    T&& value() && { assert(has_value()); return std::move(*std::get_if<0>(&v_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    errc error() const noexcept { return has_value() ? errc::ok : *std::get_if<1>(&v_); }

private:
    std::variant<T, errc> v_;
};

template <>
class [[nodiscard]] result<void> {
public:
    result() = default;
    result(errc e) : e_(e) {}

    bool has_value() const noexcept { return e_ == errc::ok; }
    explicit operator bool() const noexcept { return has_value(); }
    errc error() const noexcept { return e_; }

private:
    errc e_ = errc::ok;
};

} // namespace longhaul
