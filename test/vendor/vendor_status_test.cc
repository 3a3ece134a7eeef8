// Vendor status codes become canonical Status codes with readable messages.
#include "vendor/vendor_status.h"

#include <boost/test/unit_test.hpp>

namespace hcudp::vendor {
namespace {

rsmi_status_t FakeRsmiString(rsmi_status_t, const char** text) {
  *text = "the library's own words";
  return RSMI_STATUS_SUCCESS;
}

BOOST_AUTO_TEST_SUITE(VendorStatus)

BOOST_AUTO_TEST_CASE(DmiCodesMapToCanonicalCodes) {
  struct Case {
    dmiStatus dmi;
    StatusCode code;
  };
  const Case cases[] = {
      {DMI_STATUS_DEVICE_BUSY, StatusCode::kUnavailable},
      {DMI_STATUS_VDEV_NOT_EXIST, StatusCode::kNotFound},
      {DMI_STATUS_OUT_OF_RESOURCES, StatusCode::kResourceExhausted},
      {DMI_STATUS_INVALID_ARGUMENTS, StatusCode::kInvalidArgument},
      {DMI_STATUS_NOT_SUPPORTED, StatusCode::kUnimplemented},
      {DMI_STATUS_OPEN_MKFD_FAILED, StatusCode::kFailedPrecondition},
      {DMI_STATUS_ERROR, StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    const Status st = FromDmi(c.dmi, "dmiCall", nullptr);
    BOOST_CHECK_MESSAGE(st.code() == c.code, st.ToString());
    BOOST_CHECK_MESSAGE(st.message().find(DmiCodeName(c.dmi)) != std::string::npos, st.message());
  }
  BOOST_CHECK(FromDmi(DMI_STATUS_SUCCESS, "x", nullptr).ok());
}

// The shipped 6.2.x/6.3.x libraries go beyond the header's 31
// (reference/hcu-hardware.md §1.9): hymgr unreachable (32-34) is
// Unavailable (retried as transient), 35 means the card needs a reset, 999
// is the real UNKNOWN_ERROR.
BOOST_AUTO_TEST_CASE(ShippedLibraryCodesBeyond31AreNamedAndClassified) {
  struct Case {
    int value;
    const char* name;
    StatusCode code;
  };
  const Case cases[] = {
      {32, "DMI_STATUS_HYMGR_CONNECT_FAILED", StatusCode::kUnavailable},
      {33, "DMI_STATUS_HYMGR_SEND_ERROR", StatusCode::kUnavailable},
      {34, "DMI_STATUS_HYMGR_RECV_ERROR", StatusCode::kUnavailable},
      {35, "DMI_STATUS_RESET_REQUIRED", StatusCode::kAborted},
      {999, "DMI_STATUS_UNKNOWN_ERROR", StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    const dmiStatus code = static_cast<dmiStatus>(c.value);
    BOOST_CHECK_EQUAL(DmiCodeName(code), c.name);
    const Status st = FromDmi(code, "dmiCall", nullptr);
    BOOST_CHECK_MESSAGE(st.code() == c.code, c.value << ": " << st.ToString());
    BOOST_CHECK_MESSAGE(st.message().find(c.name) != std::string::npos, st.message());
  }
  // hymgr being unreachable names what to check.
  const Status down = FromDmi(static_cast<dmiStatus>(32), "dmiGetDeviceCount", nullptr);
  BOOST_CHECK_MESSAGE(down.message().find("hymgr") != std::string::npos, down.message());
}

// DMI initialises once per process; a failed first init names its cause.
BOOST_AUTO_TEST_CASE(InitFailuresNameHymgrAndMkfd) {
  for (dmiStatus code : {DMI_STATUS_ERROR_NOT_INITIALIZED, DMI_STATUS_OPEN_MKFD_FAILED}) {
    const Status st = FromDmi(code, "dmiGetDeviceCount", nullptr);
    BOOST_CHECK(st.code() == StatusCode::kFailedPrecondition);
    BOOST_CHECK_MESSAGE(st.message().find("is the hymgr service running? is /dev/mkfd present "
                                          "and mounted?") != std::string::npos,
                        st.message());
  }
}

BOOST_AUTO_TEST_CASE(MessagesUseTheLibrarysStringAndOurName) {
  const Status st = FromRsmi(RSMI_STATUS_BUSY, "rsmi_dev_id_get", &FakeRsmiString);
  BOOST_CHECK_EQUAL(st.message(), "rsmi_dev_id_get: the library's own words (RSMI_STATUS_BUSY)");
  BOOST_CHECK(st.code() == StatusCode::kUnavailable);
}

BOOST_AUTO_TEST_CASE(UnknownCodesAreNamedByNumber) {
  BOOST_CHECK_EQUAL(DmiCodeName(static_cast<dmiStatus>(99)), "DMI_STATUS_99");
  BOOST_CHECK_EQUAL(DmiCodeName(static_cast<dmiStatus>(36)), "DMI_STATUS_36");
  BOOST_CHECK_EQUAL(RsmiCodeName(RSMI_STATUS_UNKNOWN_ERROR), "RSMI_STATUS_UNKNOWN_ERROR");
  BOOST_CHECK_EQUAL(NvmlCodeName(NVML_ERROR_GPU_IS_LOST), "NVML_ERROR_GPU_IS_LOST");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::vendor
