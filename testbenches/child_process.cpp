#include "testbenches/child_process.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <stdexcept>

namespace t3 {

namespace {

void write_all(int fd, const std::string& text) {
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t written = write(fd, data, left);
    if (written <= 0) return;
    data += written;
    left -= static_cast<std::size_t>(written);
  }
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& job) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("run_in_child: pipe failed");
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("run_in_child: fork failed");
  if (pid == 0) {
    // The child dies with its parent (a killed test leaves no simulation running on); if the
    // parent died before the request took effect, this process has been re-parented already.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
    close(fds[0]);
    int code = 0;
    try {
      write_all(fds[1], job());
    } catch (...) {
      code = 1;
    }
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  std::string text;  // read while the child writes, so a large result never blocks it
  char buffer[4096];
  for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("run_in_child: the child process failed");
  }
  return text;
}

}  // namespace t3
