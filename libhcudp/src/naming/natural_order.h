// Natural ordering of device IDs: digit runs compare as numbers, so "vdev2"
// sorts before "vdev10" and hcucores "9" before "10".
#ifndef HCUDP_SRC_NAMING_NATURAL_ORDER_H_
#define HCUDP_SRC_NAMING_NATURAL_ORDER_H_

#include <string_view>

namespace hcudp {

// A strict weak order: equal digit runs of different lengths ("01" vs "1")
// fall back to plain byte order, so only identical strings compare equal.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace hcudp

#endif  // HCUDP_SRC_NAMING_NATURAL_ORDER_H_
