#include "chapters/11_continuous_batching/client_watch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace book::serve {
namespace {

// The peer of socket `fd` as text and port, or false if `fd` is not a connected IP socket.
bool peer_of(int fd, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return false;
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text));
    port = ntohs(in.sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof(text));
    port = ntohs(in6.sin6_port);
  } else {
    return false;
  }
  ip = text;
  return true;
}

}  // namespace

ClientWatch::ClientWatch(const std::string& ip, int port) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    char* end = nullptr;
    const std::string name = entry.path().filename().string();
    const long fd = std::strtol(name.c_str(), &end, 10);
    if (end == name.c_str() || *end != '\0') continue;
    std::string peer_ip;
    int peer_port = 0;
    if (peer_of(static_cast<int>(fd), peer_ip, peer_port) && peer_port == port && peer_ip == ip) {
      socket_ = static_cast<int>(fd);
      return;
    }
  }
}

//! [client_gone]
bool ClientWatch::gone() const {
  if (socket_ < 0) return false;
  pollfd p{socket_, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;  // nothing happened: still there
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  char byte;  // readable: more bytes (a pipelined request: still there), or end of file (gone)
  const ssize_t n = ::recv(socket_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}
//! [client_gone]

}  // namespace book::serve
