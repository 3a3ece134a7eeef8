// The one Boost.Test entry point every unit-test executable links.
#define BOOST_TEST_MODULE hcudp
#include <boost/test/unit_test.hpp>
