import { describe, expect, it } from "vitest";
import { TokenFileError, TokenTable } from "./tokens.js";

const file = (tokens: unknown) => JSON.stringify({ tokens });

function refusal(text: string): string {
  try {
    TokenTable.parse(text);
  } catch (error) {
    expect(error).toBeInstanceOf(TokenFileError);
    return (error as Error).message;
  }
  throw new Error("expected a TokenFileError");
}

describe("TokenTable", () => {
  const table = TokenTable.parse(
    file([
      { name: "crew-a", token: "s3cret", workspaces: ["reports", "team-*"] },
      { name: "admin", token: "root-token", workspaces: ["*"] },
    ]),
  );

  it("finds a token's grant and matches its workspace globs", () => {
    const crew = table.find("s3cret")!;
    expect(crew.name).toBe("crew-a");
    expect(["reports", "team-a", "team-b.2"].map(crew.allows)).toEqual([true, true, true]);
    expect(["report", "other", "xteam-a"].map(crew.allows)).toEqual([false, false, false]);
    expect(table.find("root-token")!.allows(".hidden")).toBe(true);
  });

  it("knows no other token, nor a prefix or an extension of one", () => {
    for (const token of ["", "s3cre", "s3cret ", "s3cretx", "S3CRET"]) expect(table.find(token)).toBeUndefined();
  });

  it("refuses malformed files with a message that says where", () => {
    expect(refusal("{")).toMatch(/not valid JSON/);
    expect(refusal(file([]))).toMatch(/at least one token/);
    expect(refusal(JSON.stringify({ token: [] }))).toMatch(/at least one token/);
    expect(refusal(file(["x"]))).toMatch(/tokens\[0\]: expected an object/);
    expect(refusal(file([{ name: "a", token: "", workspaces: ["*"] }]))).toMatch(/tokens\[0\] \(a\): token must be a non-empty string/);
    expect(refusal(file([{ name: "a", token: "two words", workspaces: ["*"] }]))).toMatch(/visible ASCII/);
    expect(refusal(file([{ name: "", token: "t", workspaces: ["*"] }]))).toMatch(/name must be/);
    expect(refusal(file([{ name: "a", token: "t", workspaces: [] }]))).toMatch(/workspaces must be a non-empty list/);
    expect(refusal(file([{ name: "a", token: "t", workspace: ["*"] }]))).toMatch(/unknown key "workspace"/);
    expect(refusal(file([{ name: "a", token: "t", workspaces: ["team-[a"] }]))).toMatch(/tokens\[0\] \(a\): invalid workspaces glob/);
  });

  it("reads a token's quota_bytes and quota_files; a field left out keeps the daemon's", () => {
    const limited = TokenTable.parse(
      file([
        { name: "small", token: "t-small", workspaces: ["*"], quota_bytes: "512MiB", quota_files: 1000 },
        { name: "ops", token: "t-ops", workspaces: ["*"], quota_bytes: 0 },
        { name: "plain", token: "t-plain", workspaces: ["*"] },
      ]),
    );
    expect(limited.find("t-small")!.quota).toEqual({ bytes: 512 * 2 ** 20, files: 1000 });
    expect(limited.find("t-ops")!.quota).toEqual({ bytes: 0 });
    expect(limited.find("t-plain")!.quota).toEqual({});
    expect(refusal(file([{ name: "a", token: "t", workspaces: ["*"], quota_bytes: "lots" }]))).toMatch(/tokens\[0\] \(a\): quota_bytes must be a byte count/);
    expect(refusal(file([{ name: "a", token: "t", workspaces: ["*"], quota_bytes: -5 }]))).toMatch(/quota_bytes must be/);
    expect(refusal(file([{ name: "a", token: "t", workspaces: ["*"], quota_files: "10" }]))).toMatch(/quota_files must be a whole number/);
    expect(refusal(file([{ name: "a", token: "t", workspaces: ["*"], quota: 1 }]))).toMatch(/unknown key "quota" \(expected name, token, workspaces, quota_bytes, quota_files\)/);
  });

  it("refuses a token or a name listed twice, without showing the token", () => {
    const sameToken = refusal(file([{ name: "a", token: "dup-token", workspaces: ["*"] }, { name: "b", token: "dup-token", workspaces: ["x"] }]));
    expect(sameToken).toMatch(/tokens\[1\] \(b\): the same token is listed twice/);
    expect(sameToken).not.toContain("dup-token");
    expect(refusal(file([{ name: "a", token: "t1", workspaces: ["*"] }, { name: "a", token: "t2", workspaces: ["*"] }]))).toMatch(/name a is used twice/);
  });
});
