// detail::Inflater: gzip and deflate Content-Encoding, decoded
// incrementally with zlib, so a streamed body stays streamed and a small
// gzip that inflates to gigabytes (a "zip bomb") comes out in bounded
// pieces. zlib stays in the .cpp: no public header sees it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace corio::http::detail {

class Inflater {
 public:
  enum class Format { gzip, deflate };
  explicit Inflater(Format format);
  Inflater(Inflater&&) noexcept;
  Inflater& operator=(Inflater&&) noexcept;
  ~Inflater();

  // The Content-Encoding values it decodes ("gzip", "x-gzip", "deflate").
  static bool handles(std::string_view content_encoding) noexcept;
  static Inflater for_encoding(std::string_view content_encoding);

  // Queues compressed bytes.
  void feed(std::string_view compressed);
  // Appends at most max decoded bytes to out and returns how many: fewer
  // than max only once the queued input is used up. ClientPayloadError for
  // data that is not gzip/deflate.
  std::size_t inflate(std::string& out, std::size_t max);
  // Whether queued input remains (inflate() has more to give).
  bool has_input() const noexcept;
  // The body ended: ClientPayloadError if the compressed stream did not.
  void finish() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace corio::http::detail
