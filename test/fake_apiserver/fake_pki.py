"""Throwaway PKI and kubeconfigs for the fake kube-apiserver (openssl CLI)."""

import os
import subprocess


def _openssl(*args):
    subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def _make_ca(d, name):
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".crt")
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", key, "-out", crt, "-days", "2", "-subj", "/CN=" + name)
    return key, crt


def _make_leaf(d, name, ca_key, ca_crt, subj, ext):
    key, csr, crt = (os.path.join(d, name + s) for s in (".key", ".csr", ".crt"))
    extfile = os.path.join(d, name + ".ext")
    with open(extfile, "w") as f:
        f.write(ext)
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", csr, "-subj", subj)
    _openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
             "-out", crt, "-days", "2", "-extfile", extfile)
    return key, crt


def make_pki(d):
    ca_key, ca_crt = _make_ca(d, "ca")
    _make_ca(d, "wrong-ca")
    srv_key, srv_crt = _make_leaf(
        d, "server", ca_key, ca_crt, "/CN=fake-apiserver",
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    cli_key, cli_crt = _make_leaf(
        d, "client", ca_key, ca_crt, "/O=system:masters/CN=hcu-test",
        "extendedKeyUsage=clientAuth\n")
    return dict(ca=ca_crt, server_cert=srv_crt, server_key=srv_key, client_cert=cli_crt,
                client_key=cli_key)


def write_kubeconfigs(d, port, pki, token_file):
    server = "https://127.0.0.1:%d" % port
    common = ("apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
              "clusters:\n- name: fake\n  cluster:\n    server: %s\n"
              "    certificate-authority: %s\n"
              "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: u\n" %
              (server, pki["ca"]))
    with open(token_file) as f:
        token = f.read().strip()
    with open(os.path.join(d, "kubeconfig"), "w") as f:
        f.write(common + "users:\n- name: u\n  user:\n    token: %s\n" % token)
    with open(os.path.join(d, "kubeconfig-cert"), "w") as f:
        f.write(common + "users:\n- name: u\n  user:\n    client-certificate: %s\n"
                "    client-key: %s\n" % (pki["client_cert"], pki["client_key"]))


