// The reply reader's object functions and its budget (reader.hpp).
#include "redis/reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <system_error>
#include <utility>

#include <hiredis/hiredis.h>

namespace corio::redis::detail {

namespace {

// An array: the reply hiredis knows, and the room its element slots have.
// The reply comes first, so a redisReply* of type array is an ArrayNode*.
struct ArrayNode {
  redisReply reply;
  std::size_t capacity;
};

Budget& budget_of(const redisReadTask* task) { return *static_cast<Budget*>(task->privdata); }

std::string too_many_bytes(const Budget& b) {
  return "reply refused: more than max_reply_bytes (" + std::to_string(b.max_bytes) + " bytes)";
}

// Whether `bytes` more fit the reply being read (a root starts a new one).
bool charge(const redisReadTask* task, std::size_t bytes) noexcept {
  Budget& b = budget_of(task);
  if (!task->parent) b.used = 0;
  if (bytes > b.max_bytes - std::min(b.used, b.max_bytes)) {
    b.refused = too_many_bytes(b);
    return false;
  }
  b.used += bytes;
  return true;
}

void free_reply(void* obj) noexcept {
  auto* r = static_cast<redisReply*>(obj);
  if (!r) return;
  if (r->type == REDIS_REPLY_ARRAY) {
    for (std::size_t i = 0; i < r->elements; ++i) free_reply(r->element[i]);
    std::free(r->element);
    delete reinterpret_cast<ArrayNode*>(r);
  } else {
    delete[] r->str;
    delete r;
  }
}

// Appends `child` to its parent array. The slots double as elements arrive
// (up to the count announced), never sized by the count alone.
bool adopt(const redisReadTask* task, redisReply* child) noexcept {
  if (!task->parent) return true;
  auto* parent = reinterpret_cast<ArrayNode*>(task->parent->obj);
  redisReply& array = parent->reply;
  if (array.elements == parent->capacity) {
    const auto announced = static_cast<std::size_t>(task->parent->elements);
    const std::size_t capacity =
        std::min(announced, std::max<std::size_t>(4, 2 * parent->capacity));
    void* slots = std::realloc(array.element, capacity * sizeof(redisReply*));
    if (!slots) return false;
    array.element = static_cast<redisReply**>(slots);
    parent->capacity = capacity;
  }
  array.element[array.elements++] = child;
  return true;
}

// The node for `task`, in its parent; null (the reader fails) if it cannot be.
void* attach(const redisReadTask* task, redisReply* r) noexcept {
  if (r && adopt(task, r)) return r;
  free_reply(r);
  return nullptr;
}

redisReply* node(int type) noexcept {
  auto* r = new (std::nothrow) redisReply{};
  if (r) r->type = type;
  return r;
}

void* make_string(const redisReadTask* task, char* str, std::size_t len) noexcept {
  if (!charge(task, kElementCost + len)) return nullptr;
  redisReply* r = node(task->type);
  char* copy = r ? new (std::nothrow) char[len + 1] : nullptr;
  if (!copy) {
    free_reply(r);
    return nullptr;
  }
  std::memcpy(copy, str, len);
  copy[len] = '\0';
  r->str = copy;
  r->len = len;
  return attach(task, r);
}

void* make_array(const redisReadTask* task, int elements) noexcept {
  Budget& b = budget_of(task);
  if (elements < 0 || static_cast<std::size_t>(elements) > b.max_elements) {
    b.refused = "reply refused: an array of " + std::to_string(elements) +
                " elements, more than max_reply_elements (" + std::to_string(b.max_elements) + ")";
    return nullptr;
  }
  if (!charge(task, kElementCost)) return nullptr;
  auto* array = new (std::nothrow) ArrayNode{};
  if (array) array->reply.type = REDIS_REPLY_ARRAY;
  return attach(task, array ? &array->reply : nullptr);
}

void* make_integer(const redisReadTask* task, long long value) noexcept {
  if (!charge(task, kElementCost)) return nullptr;
  redisReply* r = node(REDIS_REPLY_INTEGER);
  if (r) r->integer = value;
  return attach(task, r);
}

void* make_nil(const redisReadTask* task) noexcept {
  if (!charge(task, kElementCost)) return nullptr;
  return attach(task, node(REDIS_REPLY_NIL));
}

redisReplyObjectFunctions functions{make_string, make_array, make_integer, make_nil, free_reply};

// The length a bulk string announced, when the reader waits for its bytes
// (0 otherwise). The reader waits at the line after the '$': hiredis takes
// a type byte as soon as it arrives and a line item or array header once
// its line is complete, so a complete line where it waits is a bulk
// string's length. Only the first 32 bytes are looked at (a length has at
// most 20 digits): this runs after every read.
std::size_t announced_bulk(const redisReader* r) {
  const std::string_view rest(r->buf + r->pos, std::min<std::size_t>(r->len - r->pos, 32));
  const std::size_t eol = rest.find("\r\n");
  std::size_t length = 0;
  if (eol == std::string_view::npos) return 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + eol, length);
  return ec == std::errc() && end == rest.data() + eol ? length : 0;
}

}  // namespace

void use_budget(redisReader* reader, Budget* budget) {
  reader->fn = &functions;
  reader->privdata = budget;
}

bool pending_reply_fits(const redisReader* reader, Budget* budget) {
  if (reader->err || !reader->buf) return true;  // failed already: hiredis closes
  // An array under way is the reader's `reply`; a bulk string alone has no
  // node yet, and what `used` holds is from an earlier reply.
  const std::size_t used = reader->reply ? budget->used : 0;
  const std::size_t buffered = reader->len - reader->pos;
  const std::size_t bulk = announced_bulk(reader);
  const std::size_t pending = std::max(buffered, bulk ? bulk + kElementCost : 0);
  if (pending <= budget->max_bytes - std::min(used, budget->max_bytes)) return true;
  budget->refused = too_many_bytes(*budget);
  return false;
}

namespace {

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::string;
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::status;
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::error;
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::integer;
      out.integer = r->integer;
      return out;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::array;
      out.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      return out;
    default:
      return out;  // nil
  }
  out.str.assign(r->str, r->len);
  return out;
}

// A reader whose buffer held more than this is made anew once it is empty:
// hiredis keeps up to 16 KiB of unused buffer, which an idle connection
// would hold; a small one is kept, so small replies cost no allocation.
constexpr std::size_t kKeptBuffer = 1024;

redisReader* new_reader(Budget* budget) {
  redisReader* r = redisReaderCreateWithFunctions(nullptr);
  if (!r) throw std::bad_alloc();
  use_budget(r, budget);
  return r;
}

}  // namespace

ReplyParser::ReplyParser(Budget budget) : budget_(std::move(budget)), reader_(new_reader(&budget_)) {}

ReplyParser::~ReplyParser() { redisReaderFree(reader_); }

void ReplyParser::fail() {
  if (!budget_.refused.empty()) {
    error_ = budget_.refused;
  } else {
    error_ = std::string("protocol error: ") + (reader_->errstr[0] ? reader_->errstr : "bad reply");
  }
}

void ReplyParser::feed(std::string_view bytes) {
  if (failed()) return;
  if (redisReaderFeed(reader_, bytes.data(), bytes.size()) != REDIS_OK) fail();
  peak_ = std::max(peak_, reader_->len);
}

bool ReplyParser::next(Reply& out) {
  if (failed()) return false;
  void* r = nullptr;
  if (redisReaderGetReply(reader_, &r) != REDIS_OK) {
    fail();
    return false;
  }
  if (!r) return false;
  out = convert(static_cast<redisReply*>(r));
  reader_->fn->freeObject(r);
  return true;
}

bool ReplyParser::settle() {
  if (failed()) return false;
  if (!pending_reply_fits(reader_, &budget_)) {
    fail();
    return false;
  }
  if (peak_ > kKeptBuffer && reader_->ridx == -1 && reader_->pos == reader_->len) {
    redisReaderFree(std::exchange(reader_, nullptr));
    reader_ = new_reader(&budget_);
    peak_ = 0;
  }
  return true;
}

}  // namespace corio::redis::detail
