// Opens an existing TUN device that lives inside a named network namespace (created with `ip netns add`).
#pragma once

#include <string>

namespace h3lab {

// Enters /var/run/netns/<ns>, attaches to TUN device <dev> (IFF_TUN | IFF_NO_PI, non-blocking), and returns to the
// calling thread's original namespace. The file descriptor keeps working from any namespace. Throws std::runtime_error.
int open_tun_in_namespace(const std::string& ns, const std::string& dev);

}  // namespace h3lab
