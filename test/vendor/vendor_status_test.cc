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

BOOST_AUTO_TEST_CASE(MessagesUseTheLibrarysStringAndOurName) {
  const Status st = FromRsmi(RSMI_STATUS_BUSY, "rsmi_dev_id_get", &FakeRsmiString);
  BOOST_CHECK_EQUAL(st.message(), "rsmi_dev_id_get: the library's own words (RSMI_STATUS_BUSY)");
  BOOST_CHECK(st.code() == StatusCode::kUnavailable);
}

BOOST_AUTO_TEST_CASE(UnknownCodesAreNamedByNumber) {
  BOOST_CHECK_EQUAL(DmiCodeName(static_cast<dmiStatus>(99)), "DMI_STATUS_99");
  BOOST_CHECK_EQUAL(RsmiCodeName(RSMI_STATUS_UNKNOWN_ERROR), "RSMI_STATUS_UNKNOWN_ERROR");
  BOOST_CHECK_EQUAL(NvmlCodeName(NVML_ERROR_GPU_IS_LOST), "NVML_ERROR_GPU_IS_LOST");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::vendor
