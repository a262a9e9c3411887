// SPDX-License-Identifier: Apache-2.0
// Errors as values: every parser and source returns Expected<T> instead of throwing,
// so a broken kernel file becomes a reported state, never an unwinding sampler.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace memdiag {

struct Error {
  std::string message;
};

template <class T, class E = Error>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(E error) : state_(std::move(error)) {}      // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const E& error() const { return std::get<E>(state_); }

 private:
  std::variant<T, E> state_;
};

// Success without a payload.
struct Ok {};
using Status = Expected<Ok>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace memdiag
