// The daemon with its wall clock shifted by FILETOOLS_TEST_CLOCK_SKEW_MS (a host whose NTP is off).
const skew = Number(process.env.FILETOOLS_TEST_CLOCK_SKEW_MS ?? "0");
const RealDate = Date;
class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skew);
    else super(...args);
  }
  static now() {
    return RealDate.now() + skew;
  }
}
globalThis.Date = SkewedDate;
await import(new URL("../../../../dist/server/main.js", import.meta.url).href);
