// TEMPORARY: the CLI entry point; replaced by the real command set.
#include <cstdio>

#include "hal/registry.h"

int main() {
  for (hal::Device* d : hal::devices()) std::printf("%s\n", d->name().c_str());
  return 0;
}
