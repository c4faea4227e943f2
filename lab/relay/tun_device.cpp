// setns(2) into a named network namespace, open /dev/net/tun there, and come back (see tun_device.hpp).
#include "tun_device.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace h3lab {
namespace {

std::runtime_error sys_error(const std::string& what) {
    return std::runtime_error(what + ": " + std::strerror(errno));
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() { if (fd_ >= 0) ::close(fd_); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    int release() { int fd = fd_; fd_ = -1; return fd; }
private:
    int fd_;
};

int attach_tun(const std::string& dev) {
    Fd fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0) throw sys_error("open /dev/net/tun");
    ifreq ifr{};
    // IFF_NO_PI: bare IP packets, no 4-byte packet-information header in front of each.
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    if (dev.size() >= IFNAMSIZ) throw std::runtime_error("device name too long: " + dev);
    std::strncpy(ifr.ifr_name, dev.c_str(), IFNAMSIZ - 1);
    if (::ioctl(fd.get(), TUNSETIFF, &ifr) < 0) throw sys_error("TUNSETIFF " + dev);
    return fd.release();
}

}  // namespace

int open_tun_in_namespace(const std::string& ns, const std::string& dev) {
    Fd home(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
    if (home.get() < 0) throw sys_error("open /proc/self/ns/net");
    const std::string path = "/var/run/netns/" + ns;
    Fd target(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (target.get() < 0) throw sys_error("open " + path);
    // A TUN device is looked up by name in the namespace of the thread that calls TUNSETIFF, so enter that namespace first.
    if (::setns(target.get(), CLONE_NEWNET) < 0) throw sys_error("setns " + ns);
    int fd = -1;
    std::string failure;
    try {
        fd = attach_tun(dev);
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (::setns(home.get(), CLONE_NEWNET) < 0) {
        if (fd >= 0) ::close(fd);
        throw sys_error("setns back to the original namespace");
    }
    if (!failure.empty()) throw std::runtime_error(failure + " (namespace " + ns + ")");
    return fd;
}

}  // namespace h3lab
