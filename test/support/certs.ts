// Certificates for TLS tests, made by openssl in a temp directory for one run
// (nothing committed): a CA, and leaves for 127.0.0.1 / localhost it signs.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

function openssl(dir: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** A self-signed CA in `dir`: NAME.crt and NAME.key. */
export function makeCa(dir: string, name: string): void {
  openssl(dir, "req", "-x509", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.crt`, "-subj", `/CN=${name}`, "-days", "1");
}

/** A certificate for 127.0.0.1 / localhost signed by the CA `ca` in `dir`: NAME.crt and NAME.key. */
export function makeLeaf(dir: string, name: string, ca: string, usage: "serverAuth" | "clientAuth"): void {
  writeFileSync(path.join(dir, `${name}.ext`), `subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=${usage}\n`);
  openssl(dir, "req", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
  openssl(dir, "x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-out", `${name}.crt`, "-days", "1", "-extfile", `${name}.ext`);
}
