// Iofwd: forwarding the ranks' output to loomrun's stdout/stderr, and
// loomrun's terminal input to rank 0.
//
// Each rank writes into its own pipes; loomrun cuts what it reads into whole
// lines and writes them with one write(2) each batch, so lines of different
// ranks never tear or interleave (several complete lines of one rank may share
// a write). With --tag-output every line starts with "[rank] ". A last line
// without a newline is completed at EOF. A line longer than kMaxLine is
// passed on in pieces (the prefix only on the first piece) rather than held
// in memory without bound.
#pragma once

#include <cstddef>
#include <string>

namespace loom::launcher {

// Writes all of data to fd (blocking, retrying short writes and EINTR/EAGAIN).
// Returns false when the destination is gone (EPIPE, ...); callers then drop
// further output to it rather than fail the job.
bool writeAll(int fd, const char* data, size_t len);

class LineForwarder {
 public:
  static constexpr size_t kMaxLine = 1 << 20;

  // Reads from `src` (non-blocking pipe, owned: closed at EOF) and writes to
  // `dst`; `prefix` goes before every line ("" for none).
  LineForwarder(int src, int dst, std::string prefix);
  ~LineForwarder();
  LineForwarder(const LineForwarder&) = delete;
  LineForwarder& operator=(const LineForwarder&) = delete;

  int fd() const { return src_; }
  bool open() const { return src_ >= 0; }

  // Reads what is available now (up to a bounded amount, for fairness
  // between ranks) and forwards the complete lines. At EOF or error flushes
  // the last partial line, closes the pipe and returns false.
  bool onReadable();

  // Reads until the pipe is empty (or at EOF). Used when the rank has exited
  // so its last words come out before loomrun's message about it.
  void drain();

  // Flushes a pending partial line (newline added) and closes the pipe.
  void close();

 private:
  // Returns bytes read, 0 at EOF/error, -1 when nothing is available now.
  long readOnce();
  void emitLines(bool flushPartial);

  int src_;
  int dst_;
  std::string prefix_;
  std::string pending_;     // bytes read, not yet forwarded
  bool atLineStart_ = true;  // the next byte out starts a line (prefix it)
  bool dstAlive_ = true;
  std::string out_;          // reused output buffer
};

// Copies loomrun's stdin (a terminal) to rank 0's stdin pipe. A terminal
// cannot be handed over directly: the ranks run in their own process groups
// and would be stopped by SIGTTIN when reading it. Other kinds of stdin (file,
// pipe, /dev/null) are inherited by rank 0 without copying.
class StdinForwarder {
 public:
  StdinForwarder(int src, int dst);  // dst: non-blocking pipe write end (owned)
  ~StdinForwarder();

  bool active() const { return dst_ >= 0; }
  // What to poll: src for POLLIN while the buffer is empty, else dst for
  // POLLOUT. Returns false when nothing is to be polled.
  bool pollSpec(int* fd, short* events) const;
  void onReady();
  void close();

 private:
  int src_;
  int dst_;
  bool srcOpen_ = true;
  std::string buf_;
};

}  // namespace loom::launcher
