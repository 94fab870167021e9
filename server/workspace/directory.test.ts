// Directory.borrow: a borrowed directory shares the descriptor, and the
// owner's close waits until every borrower has let go of it.
import { fstatSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Directory } from "./directory.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "dir-test-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const isOpen = (fd: number) => {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};

describe("Directory.borrow", () => {
  it("shares the descriptor; closing the borrowed one leaves the owner's open", () => {
    const owner = Directory.open(dir, true);
    const borrowed = owner.borrow();
    expect(borrowed.fd).toBe(owner.fd);
    borrowed.close();
    borrowed.close(); // once only
    expect(isOpen(owner.fd)).toBe(true);
    const fd = owner.fd;
    owner.close();
    expect(isOpen(fd)).toBe(false);
  });

  it("the owner's close waits for its borrowers, which keep a usable descriptor meanwhile", () => {
    const owner = Directory.open(dir, true);
    const fd = owner.fd;
    const first = owner.borrow();
    const second = owner.borrow();
    owner.close();
    expect(() => owner.fd).toThrow("use of a closed descriptor");
    expect(() => owner.borrow()).toThrow("use of a closed descriptor");
    expect(fstatSync(first.fd).isDirectory()).toBe(true);
    first.close();
    expect(isOpen(fd)).toBe(true);
    second.close();
    expect(isOpen(fd)).toBe(false);
  });
});
