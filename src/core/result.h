// Result<T>: a value or an Error. Our stand-in for std::expected, which g++ 12 and clang 14
// do not both offer in C++20.
#pragma once

#include <type_traits>
#include <utility>
#include <variant>

#include "core/error.h"

namespace cocode {

template <class T>
class [[nodiscard]] Result {
  public:
    Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    T& value() & { return std::get<0>(state_); }
    const T& value() const& { return std::get<0>(state_); }
    T&& value() && { return std::get<0>(std::move(state_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const& { return std::get<1>(state_); }
    Error&& error() && { return std::get<1>(std::move(state_)); }

    // For the edge of the program: the value, or a Failure thrown.
    T value_or_throw() && {
        if (!ok()) throw Failure(std::move(*this).error());
        return std::move(*this).value();
    }

  private:
    std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
  public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), ok_(false) {}

    bool ok() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    const Error& error() const& { return error_; }
    Error&& error() && { return std::move(error_); }
    void value_or_throw() && {
        if (!ok_) throw Failure(std::move(error_));
    }

  private:
    Error error_;
    bool ok_ = true;
};

}  // namespace cocode
