/// @file
/// Whether an HTTP client is still there. cpp-httplib 0.11 (Debian's) hands a handler the
/// request but not its socket, so the socket is found by the client's address and port (unique
/// among open connections), and then watched: a peer that closed its end makes the socket
/// readable with nothing to read (end of file) or reports a hang-up. The server polls this
/// while a request waits for its tokens, and cancels the request when the client has gone.
#pragma once

#include <string>

namespace book::serve {

/// Watches one client connection of this process. Linux only (it reads /proc/self/fd).
class ClientWatch {
 public:
  /// Finds the connected socket whose peer is `ip`:`port` (httplib's Request::remote_addr and
  /// remote_port). If none is found, watching() is false and gone() always answers false.
  ClientWatch(const std::string& ip, int port);
  bool watching() const { return socket_ >= 0; }  ///< the socket was found
  /// True once the client closed its end (or the connection broke). Never blocks. A client that
  /// only shut down its sending side looks gone too: HTTP clients close whole connections.
  bool gone() const;

 private:
  int socket_ = -1;
};

}  // namespace book::serve
