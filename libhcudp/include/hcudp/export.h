// Symbol visibility for libhcudp. The library is built with
// -fvisibility=hidden; only declarations marked HCUDP_EXPORT are its ABI.
#ifndef HCUDP_EXPORT_H_
#define HCUDP_EXPORT_H_

#define HCUDP_EXPORT [[gnu::visibility("default")]]

#endif  // HCUDP_EXPORT_H_
