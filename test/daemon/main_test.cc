#define BOOST_TEST_MODULE hcu_dp_daemon
#include <boost/test/unit_test.hpp>
