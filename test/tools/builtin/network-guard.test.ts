import { describe, expect, it } from "vitest";
import { DimsumError } from "../../../src/errors.js";
import {
  checkUrl,
  type GuardDeps,
  type HostLookup,
  isAddressAllowed,
  pinnedLookup,
  type ResolvedAddress,
} from "../../../src/tools/builtin/network-guard.js";

describe("isAddressAllowed", () => {
  it.each([
    ["93.184.216.34", true, "unicast"],
    ["8.8.8.8", true, "unicast"],
    ["2606:4700:4700::1111", true, "unicast"],
    ["127.0.0.1", false, "loopback"],
    ["127.8.9.10", false, "loopback"],
    ["10.1.2.3", false, "private"],
    ["172.16.0.1", false, "private"],
    ["172.31.255.255", false, "private"],
    ["192.168.1.1", false, "private"],
    ["169.254.169.254", false, "linkLocal"],
    ["100.64.0.1", false, "carrierGradeNat"],
    ["0.0.0.0", false, "unspecified"],
    ["224.0.0.1", false, "multicast"],
    ["255.255.255.255", false, "broadcast"],
    ["::1", false, "loopback"],
    ["::", false, "unspecified"],
    ["fe80::1", false, "linkLocal"],
    ["fd00::1", false, "uniqueLocal"],
    ["fc00::1", false, "uniqueLocal"],
    ["ff02::1", false, "multicast"],
    ["::ffff:127.0.0.1", false, "loopback"],
    ["::ffff:10.0.0.1", false, "private"],
    ["::ffff:169.254.169.254", false, "linkLocal"],
    ["::127.0.0.1", false, "loopback"],
    ["::7f00:1", false, "ipv4Compatible"],
    ["64:ff9b::a00:1", false, "rfc6052/private"],
    ["64:ff9b::5db8:d822", true, "rfc6052"],
    ["2002:7f00:1::", false, "6to4/loopback"],
    ["not-an-ip", false, "invalid"],
  ])("%s -> allowed=%s (%s)", (address, allowed, range) => {
    expect(isAddressAllowed(address)).toEqual({ allowed, range });
  });
});

/** A resolver that answers from a table and records what it was asked. */
function fakeLookup(table: Record<string, string[]>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

async function refused(url: string, deps: GuardDeps): Promise<string> {
  const err = await checkUrl(url, deps).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(DimsumError);
  return (err as DimsumError).toLine();
}

describe("checkUrl", () => {
  const lookup = fakeLookup({
    "public.example": ["93.184.216.34"],
    "dual.example": ["93.184.216.34", "2606:2800:220:1::1"],
    "sneaky.example": ["93.184.216.34", "10.0.0.7"],
    "metadata.example": ["169.254.169.254"],
  });
  const deps: GuardDeps = { lookup, isAddressAllowed };

  it("returns the checked addresses of a public host", async () => {
    const target = await checkUrl("https://dual.example/path?q=1", deps);
    expect(target.url.href).toBe("https://dual.example/path?q=1");
    expect(target.addresses).toEqual([
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:220:1::1", family: 6 },
    ]);
  });

  it("refuses a host when any of its addresses is private", async () => {
    const line = await refused("http://sneaky.example/", deps);
    expect(line).toContain("10.0.0.7 is a private address (sneaky.example resolves to 10.0.0.7)");
    expect(line).toContain("tools.fetch.allowPrivateNetwork");
  });

  it("refuses names resolving to cloud metadata addresses", async () => {
    expect(await refused("http://metadata.example/latest/meta-data/", deps)).toContain("linkLocal");
  });

  it("checks IP literals without a DNS lookup, including odd spellings", async () => {
    const before = lookup.calls.length;
    expect(await refused("http://127.0.0.1:8080/", deps)).toContain("127.0.0.1 is a loopback address");
    expect(await refused("http://[::1]/", deps)).toContain("loopback");
    expect(await refused("http://2130706433/", deps)).toContain("127.0.0.1"); // decimal form of 127.0.0.1
    expect(await refused("http://0x7f.1/", deps)).toContain("loopback");
    expect(await refused("http://[::ffff:a00:1]/", deps)).toContain("private");
    expect(lookup.calls.length).toBe(before);
  });

  it("refuses schemes other than http and https, and junk", async () => {
    expect(await refused("file:///etc/passwd", deps)).toContain("not file:");
    expect(await refused("ftp://public.example/", deps)).toContain("not ftp:");
    expect(await refused("not a url", deps)).toContain("is not a valid URL");
  });

  it("reports hosts that do not resolve", async () => {
    expect(await refused("http://nowhere.example/", deps)).toContain(
      "Could not resolve the host nowhere.example",
    );
  });
});

describe("pinnedLookup", () => {
  const addresses: ResolvedAddress[] = [
    { address: "93.184.216.34", family: 4 },
    { address: "2606:2800:220:1::1", family: 6 },
  ];

  it("answers every lookup with the checked addresses, whatever the name", async () => {
    const lookup = pinnedLookup(addresses);
    const all = await new Promise((resolve) => {
      lookup("evil.example", { all: true }, (_err, result) => resolve(result));
    });
    expect(all).toEqual(addresses);
    const one = await new Promise((resolve) => {
      lookup("evil.example", { family: 6 }, (_err, address, family) => resolve([address, family]));
    });
    expect(one).toEqual(["2606:2800:220:1::1", 6]);
  });
});
