// Our own vendor declarations keep the documented x86-64 layouts
// (reference/hcu-hardware.md §1.6). vendor_abi.h already pins them with
// static_asserts; this test restates the table so a change to either is seen.
#include <boost/test/unit_test.hpp>

#include "vendor/vendor_abi.h"

namespace {

BOOST_AUTO_TEST_SUITE(VendorAbi)

BOOST_AUTO_TEST_CASE(DmiDeviceInfoMatchesTheDocumentedLayout) {
  BOOST_CHECK_EQUAL(sizeof(dmiDeviceInfo), 296u);
  BOOST_CHECK_EQUAL(offsetof(dmiDeviceInfo, compute_unit_count), 256u);
  BOOST_CHECK_EQUAL(offsetof(dmiDeviceInfo, global_mem_size), 264u);
  BOOST_CHECK_EQUAL(offsetof(dmiDeviceInfo, usage_mem_size), 272u);
  BOOST_CHECK_EQUAL(offsetof(dmiDeviceInfo, container_id), 280u);
  BOOST_CHECK_EQUAL(offsetof(dmiDeviceInfo, device_id), 288u);
}

BOOST_AUTO_TEST_CASE(RsmiStructsAndEnumsMatchTheDocumentedLayout) {
  BOOST_CHECK_EQUAL(sizeof(rsmi_error_count_t), 64u);
  BOOST_CHECK_EQUAL(offsetof(rsmi_error_count_t, uncorrectable_err), 8u);
  BOOST_CHECK_EQUAL(sizeof(rsmi_evt_notification_data_t), 104u);
  BOOST_CHECK_EQUAL(sizeof(rsmi_version_t), 24u);
  BOOST_CHECK_EQUAL(sizeof(rsmi_gpu_block_t), 8u);
  BOOST_CHECK_EQUAL(sizeof(rsmi_status_t), 4u);
  BOOST_CHECK_EQUAL(sizeof(dmiStatus), 4u);
  BOOST_CHECK_EQUAL(sizeof(nvmlReturn_t), 4u);
}

BOOST_AUTO_TEST_CASE(StatusCodesHaveTheDocumentedValues) {
  BOOST_CHECK_EQUAL(static_cast<int>(DMI_STATUS_DEVICE_BUSY), 17);
  BOOST_CHECK_EQUAL(static_cast<int>(DMI_STATUS_VDEV_NOT_EXIST), 15);
  BOOST_CHECK_EQUAL(static_cast<int>(DMI_STATUS_HYMGR_CONNECT_FAILED), 32);
  BOOST_CHECK_EQUAL(static_cast<int>(DMI_STATUS_RESET_REQUIRED), 35);
  BOOST_CHECK_EQUAL(static_cast<int>(DMI_STATUS_UNKNOWN_ERROR), 999);
  BOOST_CHECK_EQUAL(static_cast<int>(RSMI_STATUS_AMDGPU_RESTART_ERR), 19);
  BOOST_CHECK_EQUAL(static_cast<uint64_t>(RSMI_GPU_BLOCK_FUSE), 0x2000u);
  BOOST_CHECK_EQUAL(static_cast<int>(NVML_ERROR_IN_USE), 19);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
