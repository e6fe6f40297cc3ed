// Result<T>: a recoverable failure is a value, never an exception or an abort.
// An Error carries a human-readable context chain plus the API's own code (VkResult or
// HRESULT) so a caller can both print it and branch on it (e.g. VK_ERROR_NOT_PERMITTED_KHR),
// and its category: whose the failure is, which decides a command's exit status
// (app/exit_status.h) once, wherever the error came from.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace gpuoverlap {

enum class ErrorCategory {
  input,        // what the user gave: the command line, a scenario file, a results or output
                // folder or file named, unusable as given
  environment,  // the machine: no GPU driver or device, a GPU API call that failed, a file
                // that could not be written
  unsupported,  // a feature a scenario asks for that this runtime or device lacks, found
                // before the scenario's first GPU work: the device is intact, and a suite
                // goes on with its next scenario (exit status as environment's elsewhere)
};

struct Error {
  std::string message;        // one line, says what failed and why
  std::int64_t api_code = 0;  // VkResult / HRESULT; 0 when the failure is not an API call
  std::string api_code_name;  // e.g. "VK_ERROR_DEVICE_LOST"; empty when api_code == 0
  // Unless the origin says otherwise: an API call's failure is the environment's, any other
  // failure (a file's content, an argument) is the input's.
  ErrorCategory category = api_code != 0 ? ErrorCategory::environment : ErrorCategory::input;

  // Prefixes context ("scenario 'default': ") while keeping the API code and the category.
  Error with_context(const std::string& context) const {
    Error e = *this;
    e.message = context + message;
    return e;
  }
  Error with_category(ErrorCategory c) const {
    Error e = *this;
    e.category = c;
    return e;
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // Contract: call value() only when ok(), error() only when !ok().
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const Error& error() const { return std::get<Error>(state_); }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Error> state_;
};

// Result<void> equivalent.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

inline Error make_error(std::string message, ErrorCategory category = ErrorCategory::input) {
  return Error{std::move(message), 0, {}, category};
}

}  // namespace gpuoverlap

// Propagates an error from an expression yielding Result<...>; binds nothing.
#define GPUOVERLAP_TRY(expr)                                                 \
  do {                                                                       \
    auto gpuoverlap_try_result_ = (expr);                                    \
    if (!gpuoverlap_try_result_.ok()) return gpuoverlap_try_result_.error(); \
  } while (0)
