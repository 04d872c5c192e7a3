// Linked into the mlsys executable only, which carries libstdc++ and libgcc statically (README
// "Running in a contest harness"). GCC 12's libstdc++.a, as Debian 12 builds it, calls
// arc4random() (glibc 2.36) from std::random_device, and that object file comes along with every
// standard exception class, so the static link would need GLIBC_2.36 and the bundle would not start
// on Ubuntu 22.04 (glibc 2.35). This definition resolves the call at link time instead, through
// getrandom(2) (glibc 2.25). mlsys itself never constructs a std::random_device: its randomness is
// seeded from --seed.
#include <sys/random.h>

#include <cerrno>
#include <cstdint>

extern "C" std::uint32_t arc4random(void) {
  std::uint32_t v = 0;
  // getrandom() of 4 bytes from the blocking pool returns them whole or fails with EINTR.
  while (::getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v)) {
    if (errno != EINTR) break;
  }
  return v;
}
