#include "iofwd.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace loom::launcher {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
// Reads per onReadable() call: one busy rank must not starve the others.
constexpr int kReadsPerWakeup = 4;
// Bound on drain(): a grandchild that keeps writing must not stall loomrun.
constexpr size_t kMaxDrain = 16 * 1024 * 1024;

}  // namespace

bool writeAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = ::write(fd, data, len);
    if (n > 0) {
      data += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {  // someone made our stdout non-blocking
      struct pollfd p = {fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    return false;
  }
  return true;
}

LineForwarder::LineForwarder(int src, int dst, std::string prefix)
    : src_(src), dst_(dst), prefix_(std::move(prefix)) {}

LineForwarder::~LineForwarder() {
  if (src_ >= 0) ::close(src_);
}

long LineForwarder::readOnce() {
  size_t old = pending_.size();
  pending_.resize(old + kReadChunk);
  ssize_t n;
  do {
    n = ::read(src_, pending_.data() + old, kReadChunk);
  } while (n < 0 && errno == EINTR);
  pending_.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
  if (n < 0 && errno == EAGAIN) return -1;
  return n > 0 ? n : 0;  // 0: EOF, or an error treated as EOF
}

void LineForwarder::emitLines(bool flushPartial) {
  size_t lastNl = pending_.rfind('\n');
  size_t whole = lastNl == std::string::npos ? 0 : lastNl + 1;
  bool tail = pending_.size() > whole &&
              (flushPartial || pending_.size() - whole >= kMaxLine);
  if (whole == 0 && !tail) return;

  const char* data;
  size_t len;
  if (prefix_.empty()) {
    // No prefix: the bytes go out as they are, plus a newline for a
    // flushed last line.
    if (tail && flushPartial) pending_.push_back('\n');
    len = tail ? pending_.size() : whole;
    data = pending_.data();
    atLineStart_ = !tail || flushPartial;
  } else {
    out_.clear();
    size_t pos = 0;
    while (pos < whole) {
      size_t nl = pending_.find('\n', pos);
      if (atLineStart_) out_ += prefix_;
      out_.append(pending_, pos, nl + 1 - pos);
      atLineStart_ = true;
      pos = nl + 1;
    }
    if (tail) {
      if (atLineStart_) out_ += prefix_;
      out_.append(pending_, whole, std::string::npos);
      if (flushPartial) out_ += '\n';
      atLineStart_ = flushPartial;
    }
    data = out_.data();
    len = out_.size();
  }
  if (dstAlive_) dstAlive_ = writeAll(dst_, data, len);
  pending_.erase(0, tail ? pending_.size() : whole);
}

bool LineForwarder::onReadable() {
  if (src_ < 0) return false;
  bool eof = false;
  for (int i = 0; i < kReadsPerWakeup; ++i) {
    long n = readOnce();
    if (n == 0) {
      eof = true;
      break;
    }
    if (n < 0) break;
  }
  if (eof) {
    close();
    return false;
  }
  emitLines(false);
  return true;
}

void LineForwarder::drain() {
  if (src_ < 0) return;
  size_t total = 0;
  while (total < kMaxDrain) {
    long n = readOnce();
    if (n == 0) {
      close();
      return;
    }
    if (n < 0) break;
    total += static_cast<size_t>(n);
    if (pending_.size() >= kMaxLine) emitLines(false);
  }
  emitLines(false);
}

void LineForwarder::close() {
  emitLines(true);
  if (src_ >= 0) ::close(src_);
  src_ = -1;
}

StdinForwarder::StdinForwarder(int src, int dst) : src_(src), dst_(dst) {}

StdinForwarder::~StdinForwarder() { close(); }

void StdinForwarder::close() {
  if (dst_ >= 0) ::close(dst_);
  dst_ = -1;
  srcOpen_ = false;
  buf_.clear();
}

bool StdinForwarder::pollSpec(int* fd, short* events) const {
  if (dst_ < 0) return false;
  if (!buf_.empty()) {
    *fd = dst_;
    *events = POLLOUT;
    return true;
  }
  if (!srcOpen_) return false;
  *fd = src_;
  *events = POLLIN;
  return true;
}

void StdinForwarder::onReady() {
  if (dst_ < 0) return;
  if (buf_.empty() && srcOpen_) {
    char chunk[4096];
    ssize_t n = ::read(src_, chunk, sizeof chunk);
    if (n > 0) {
      buf_.assign(chunk, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      // EOF (Ctrl-D), or EIO when loomrun runs in the background: rank 0
      // sees end of input.
      srcOpen_ = false;
    }
  }
  if (!buf_.empty()) {
    ssize_t n = ::write(dst_, buf_.data(), buf_.size());
    if (n > 0) {
      buf_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      close();  // rank 0 closed its stdin or exited
      return;
    }
  }
  if (!srcOpen_ && buf_.empty()) close();
}

}  // namespace loom::launcher
