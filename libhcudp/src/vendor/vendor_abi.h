// Our own declarations of the parts of the vendor C API that the plugin uses
// (reference/hcu-hardware.md §1.3-1.7). The vendor headers are never included:
// their licences differ and rocm_smi.h drags in libdrm headers. Layouts are
// pinned by static_asserts against the table in §1.6 (x86-64, LP64), so an
// accidental edit that would corrupt memory fails to compile instead.
//
// The stand-in libraries in test/stub_vendor/ include this header too, so the
// symbols they export have exactly the signatures declared here.
#ifndef HCUDP_VENDOR_VENDOR_ABI_H_
#define HCUDP_VENDOR_VENDOR_ABI_H_

#include <cstddef>
#include <cstdint>

extern "C" {

// ---- librocm_smi64 (RSMI) ----
typedef enum {
  RSMI_STATUS_SUCCESS = 0,
  RSMI_STATUS_INVALID_ARGS = 1,
  RSMI_STATUS_NOT_SUPPORTED = 2,
  RSMI_STATUS_FILE_ERROR = 3,
  RSMI_STATUS_PERMISSION = 4,
  RSMI_STATUS_OUT_OF_RESOURCES = 5,
  RSMI_STATUS_INTERNAL_EXCEPTION = 6,
  RSMI_STATUS_INPUT_OUT_OF_BOUNDS = 7,
  RSMI_STATUS_INIT_ERROR = 8,
  RSMI_STATUS_NOT_YET_IMPLEMENTED = 9,
  RSMI_STATUS_NOT_FOUND = 10,
  RSMI_STATUS_INSUFFICIENT_SIZE = 11,
  RSMI_STATUS_INTERRUPT = 12,
  RSMI_STATUS_UNEXPECTED_SIZE = 13,
  RSMI_STATUS_NO_DATA = 14,
  RSMI_STATUS_UNEXPECTED_DATA = 15,
  RSMI_STATUS_BUSY = 16,
  RSMI_STATUS_REFCOUNT_OVERFLOW = 17,
  RSMI_STATUS_SETTING_UNAVAILABLE = 18,
  RSMI_STATUS_AMDGPU_RESTART_ERR = 19,
  RSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF,
} rsmi_status_t;

typedef enum {
  RSMI_MEM_TYPE_VRAM = 0,
  RSMI_MEM_TYPE_VIS_VRAM = 1,
  RSMI_MEM_TYPE_GTT = 2,
} rsmi_memory_type_t;

typedef enum {
  RSMI_IOLINK_TYPE_UNDEFINED = 0,
  RSMI_IOLINK_TYPE_PCIEXPRESS = 1,
  RSMI_IOLINK_TYPE_XGMI = 2,  // Hygon HSL
  RSMI_IOLINK_TYPE_NUMIOLINKTYPES = 3,
  RSMI_IOLINK_TYPE_SIZE = 0xFFFFFFFF,
} RSMI_IO_LINK_TYPE;

// 8 bytes because of the 0x8000000000000000 member.
typedef enum : uint64_t {
  RSMI_GPU_BLOCK_INVALID = 0,
  RSMI_GPU_BLOCK_UMC = 0x1,
  RSMI_GPU_BLOCK_SDMA = 0x2,
  RSMI_GPU_BLOCK_GFX = 0x4,
  RSMI_GPU_BLOCK_MMHUB = 0x8,
  RSMI_GPU_BLOCK_ATHUB = 0x10,
  RSMI_GPU_BLOCK_PCIE_BIF = 0x20,
  RSMI_GPU_BLOCK_HDP = 0x40,
  RSMI_GPU_BLOCK_XGMI_WAFL = 0x80,
  RSMI_GPU_BLOCK_DF = 0x100,
  RSMI_GPU_BLOCK_SMN = 0x200,
  RSMI_GPU_BLOCK_SEM = 0x400,
  RSMI_GPU_BLOCK_MP0 = 0x800,
  RSMI_GPU_BLOCK_MP1 = 0x1000,
  RSMI_GPU_BLOCK_FUSE = 0x2000,
  RSMI_GPU_BLOCK_RESERVED = 0x8000000000000000ull,
} rsmi_gpu_block_t;

typedef struct {
  uint64_t correctable_err;
  uint64_t uncorrectable_err;
  uint64_t deferred_err;
  uint64_t reserved[5];
} rsmi_error_count_t;

typedef struct {
  uint32_t dv_ind;
  uint32_t event;  // rsmi_evt_notification_type_t
  char message[96];
} rsmi_evt_notification_data_t;

typedef struct {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
  const char* build;
} rsmi_version_t;

// ---- libhydmi (DMI) ----
typedef enum {
  DMI_STATUS_SUCCESS = 0,
  DMI_STATUS_ERROR = 1,
  DMI_STATUS_NO_MEMORY = 2,
  DMI_STATUS_OPEN_MKFD_FAILED = 3,
  DMI_STATUS_MKFD_ALREADY_OPENED = 4,
  DMI_STATUS_SYS_NODE_NOT_EXIST = 5,
  DMI_STATUS_NOT_SUPPORTED = 6,
  DMI_STATUS_MKFD_NOT_OPENED = 7,
  DMI_STATUS_CREATE_VDEV_FAILED = 8,
  DMI_STATUS_DESTROY_VDEV_FAILED = 9,
  DMI_STATUS_INVALID_ARGUMENTS = 10,
  DMI_STATUS_OUT_OF_RESOURCES = 11,
  DMI_STATUS_QUERY_VDEV_INFO_FAILED = 12,
  DMI_STATUS_ERROR_NOT_INITIALIZED = 13,
  DMI_STATUS_DEVICE_NOT_SUPPORT = 14,
  DMI_STATUS_VDEV_NOT_EXIST = 15,
  DMI_STATUS_INIT_DEVICE_FAILED = 16,
  DMI_STATUS_DEVICE_BUSY = 17,
  DMI_STATUS_FILE_ERROR = 18,
  DMI_STATUS_PERMISSION = 19,
  DMI_STATUS_INTERNAL_EXCEPTION = 20,
  DMI_STATUS_INPUT_OUT_OF_BOUNDS = 21,
  DMI_STATUS_SMI_INIT_ERROR = 22,
  DMI_STATUS_NOT_FOUND = 23,
  DMI_STATUS_INSUFFICIENT_SIZE = 24,
  DMI_STATUS_INTERRUPT = 25,
  DMI_STATUS_UNEXPECTED_SIZE = 26,
  DMI_STATUS_NO_DATA = 27,
  DMI_STATUS_UNEXPECTED_DATA = 28,
  DMI_STATUS_SMI_BUSY = 29,
  DMI_STATUS_REFCOUNT_OVERFLOW = 30,
  DMI_STATUS_NOT_YET_IMPLEMENTED = 31,
  // Beyond the header: what the shipped 6.2.x/6.3.x libraries return
  // (reference/hcu-hardware.md §1.9; the header's UNKNOWN_ERROR = 32 is stale).
  DMI_STATUS_HYMGR_CONNECT_FAILED = 32,
  DMI_STATUS_HYMGR_SEND_ERROR = 33,
  DMI_STATUS_HYMGR_RECV_ERROR = 34,
  DMI_STATUS_RESET_REQUIRED = 35,
  DMI_STATUS_UNKNOWN_ERROR = 999,
} dmiStatus;

enum { DMI_NAME_SIZE = 256 };

typedef struct {
  char name[DMI_NAME_SIZE];
  int compute_unit_count;
  size_t global_mem_size;  // bytes
  size_t usage_mem_size;   // bytes
  uint64_t container_id;   // vHCU only
  int device_id;           // parent card of a vHCU; the card itself otherwise
} dmiDeviceInfo;

// ---- libhydmi_mig (MIG, NVML symbol names, Hygon layouts) ----
typedef enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

enum { NVML_DEVICE_MIG_DISABLE = 0, NVML_DEVICE_MIG_ENABLE = 1 };

// ---- Function types, one per symbol we resolve ----
typedef rsmi_status_t (*rsmi_init_fn)(uint64_t init_flags);
typedef rsmi_status_t (*rsmi_shut_down_fn)(void);
typedef rsmi_status_t (*rsmi_status_string_fn)(rsmi_status_t status, const char** status_string);
typedef rsmi_status_t (*rsmi_num_monitor_devices_fn)(uint32_t* num_devices);
typedef rsmi_status_t (*rsmi_dev_pci_id_get_fn)(uint32_t dv_ind, uint64_t* bdfid);
typedef rsmi_status_t (*rsmi_dev_serial_number_get_fn)(uint32_t dv_ind, char* serial_num,
                                                       uint32_t len);
typedef rsmi_status_t (*rsmi_dev_unique_id_get_fn)(uint32_t dv_ind, uint64_t* id);
typedef rsmi_status_t (*rsmi_dev_id_get_fn)(uint32_t dv_ind, uint16_t* id);
typedef rsmi_status_t (*rsmi_dev_memory_total_get_fn)(uint32_t dv_ind, rsmi_memory_type_t type,
                                                      uint64_t* total);
typedef rsmi_status_t (*rsmi_topo_get_numa_node_number_fn)(uint32_t dv_ind, uint32_t* numa_node);
typedef rsmi_status_t (*rsmi_topo_get_link_type_fn)(uint32_t src, uint32_t dst, uint64_t* hops,
                                                    RSMI_IO_LINK_TYPE* type);
typedef rsmi_status_t (*rsmi_topo_get_link_weight_fn)(uint32_t src, uint32_t dst, uint64_t* weight);
typedef rsmi_status_t (*rsmi_topo_is_hylink_fn)(uint32_t src, uint32_t dst, bool* is_hylink);
typedef rsmi_status_t (*rsmi_dev_ecc_count_get_fn)(uint32_t dv_ind, rsmi_gpu_block_t block,
                                                   rsmi_error_count_t* ec);
typedef rsmi_status_t (*rsmi_dev_xhcl_link_number_get_fn)(uint32_t dv_ind, uint32_t* link_num);
typedef rsmi_status_t (*rsmi_dev_xhcl_link_state_get_fn)(uint32_t dv_ind, uint32_t link_id,
                                                         uint32_t* link_state);
typedef rsmi_status_t (*rsmi_dev_xhcl_link_remote_bdfid_get_fn)(uint32_t dv_ind, uint32_t link_id,
                                                                uint64_t* bdfid);
typedef rsmi_status_t (*rsmi_event_notification_init_fn)(uint32_t dv_ind);
typedef rsmi_status_t (*rsmi_event_notification_mask_set_fn)(uint32_t dv_ind, uint64_t mask);
typedef rsmi_status_t (*rsmi_event_notification_get_fn)(int timeout_ms, uint32_t* num_elem,
                                                        rsmi_evt_notification_data_t* data);
typedef rsmi_status_t (*rsmi_event_notification_stop_fn)(uint32_t dv_ind);
typedef rsmi_status_t (*rsmi_version_str_get_fn)(uint32_t component, char* ver_str, uint32_t len);

typedef dmiStatus (*dmiGetStatusString_fn)(dmiStatus status, const char** status_string);
typedef dmiStatus (*dmiGetDeviceCount_fn)(int* count);
typedef dmiStatus (*dmiGetDeviceInfo_fn)(int device_id, dmiDeviceInfo* device_info);
typedef dmiStatus (*dmiGetMaxVDeviceCount_fn)(int* count);
typedef dmiStatus (*dmiGetVDeviceInfo_fn)(int vdevice_id, dmiDeviceInfo* device_info);
typedef dmiStatus (*dmiGetDeviceRemainingInfo_fn)(int device_id, size_t* cus, size_t* memories);
typedef dmiStatus (*dmiCreateVDevices_fn)(int device_id, int vdev_count, int* vdev_cus,
                                          int* vdev_mem_size);
typedef dmiStatus (*dmiStopVDevice_fn)(int vdevice_id);
typedef dmiStatus (*dmiDestroySingleVDevice_fn)(int vdevice_id);

typedef nvmlReturn_t (*nvmlGetSystemMigMode_fn)(unsigned* current_mode, unsigned* pending_mode);

}  // extern "C"

// Layout checks (reference/hcu-hardware.md §1.6).
static_assert(sizeof(rsmi_status_t) == 4, "rsmi_status_t is a 4-byte enum");
static_assert(sizeof(RSMI_IO_LINK_TYPE) == 4, "RSMI_IO_LINK_TYPE is a 4-byte enum");
static_assert(sizeof(rsmi_gpu_block_t) == 8, "rsmi_gpu_block_t is an 8-byte enum");
static_assert(sizeof(rsmi_error_count_t) == 64, "rsmi_error_count_t layout");
static_assert(offsetof(rsmi_error_count_t, correctable_err) == 0, "rsmi_error_count_t layout");
static_assert(offsetof(rsmi_error_count_t, uncorrectable_err) == 8, "rsmi_error_count_t layout");
static_assert(offsetof(rsmi_error_count_t, deferred_err) == 16, "rsmi_error_count_t layout");
static_assert(offsetof(rsmi_error_count_t, reserved) == 24, "rsmi_error_count_t layout");
static_assert(sizeof(rsmi_evt_notification_data_t) == 104, "rsmi_evt_notification_data_t layout");
static_assert(offsetof(rsmi_evt_notification_data_t, event) == 4, "rsmi_evt_notification_data_t");
static_assert(offsetof(rsmi_evt_notification_data_t, message) == 8, "rsmi_evt_notification_data_t");
static_assert(sizeof(rsmi_version_t) == 24, "rsmi_version_t layout");
static_assert(sizeof(dmiStatus) == 4, "dmiStatus is a 4-byte enum");
static_assert(sizeof(dmiDeviceInfo) == 296, "dmiDeviceInfo layout");
static_assert(offsetof(dmiDeviceInfo, name) == 0, "dmiDeviceInfo layout");
static_assert(offsetof(dmiDeviceInfo, compute_unit_count) == 256, "dmiDeviceInfo layout");
static_assert(offsetof(dmiDeviceInfo, global_mem_size) == 264, "dmiDeviceInfo layout");
static_assert(offsetof(dmiDeviceInfo, usage_mem_size) == 272, "dmiDeviceInfo layout");
static_assert(offsetof(dmiDeviceInfo, container_id) == 280, "dmiDeviceInfo layout");
static_assert(offsetof(dmiDeviceInfo, device_id) == 288, "dmiDeviceInfo layout");
static_assert(sizeof(nvmlReturn_t) == 4, "nvmlReturn_t is a 4-byte enum");

#endif  // HCUDP_VENDOR_VENDOR_ABI_H_
