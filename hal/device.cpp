#include "hal/device.h"

namespace hal {

Support Device::supports(const OpCall&) const { return {}; }

}  // namespace hal
