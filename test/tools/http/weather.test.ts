import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHttpToolDefinition } from "../../../src/tools/http/definition.js";
import { loadHttpTools, shippedHttpToolsDir } from "../../../src/tools/http/load-http-tools.js";
import type { JsonSchemaTool } from "../../../src/tools/types.js";
import { projectRoot } from "../../support/fixtures.js";
import { callTool, makeContext, sendJson, startServer, type TestServer, textOf } from "./helpers.js";

// Shapes as documented at open-meteo.com/en/docs and open-meteo.com/en/docs/geocoding-api.
const BERLIN = {
  results: [
    {
      id: 2950159,
      name: "Berlin",
      latitude: 52.52437,
      longitude: 13.41053,
      elevation: 74,
      feature_code: "PPLC",
      country_code: "DE",
      timezone: "Europe/Berlin",
      population: 3426354,
      country: "Germany",
      admin1: "State of Berlin",
    },
  ],
  generationtime_ms: 0.7,
};

function forecast(days: number) {
  const time = Array.from({ length: days }, (_, i) => `2025-06-0${i + 1}`);
  return {
    latitude: 52.52,
    longitude: 13.419998,
    generationtime_ms: 0.1,
    utc_offset_seconds: 7200,
    timezone: "Europe/Berlin",
    timezone_abbreviation: "CEST",
    elevation: 38,
    current_units: { time: "iso8601", interval: "seconds", temperature_2m: "°C", weather_code: "wmo code" },
    current: { time: "2025-06-01T12:00", interval: 900, temperature_2m: 22.4, weather_code: 2 },
    daily_units: { time: "iso8601", temperature_2m_max: "°C", temperature_2m_min: "°C" },
    daily: {
      time,
      weather_code: time.map(() => 3),
      temperature_2m_max: time.map(() => 25.1),
      temperature_2m_min: time.map(() => 14.2),
    },
  };
}

let server: TestServer;
let weather: JsonSchemaTool;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/v1/search") {
      const name = url.searchParams.get("name");
      sendJson(res, 200, name === "Berlin" ? BERLIN : { generationtime_ms: 0.3 });
    } else if (url.pathname === "/v1/forecast") {
      if (!url.searchParams.get("latitude")) {
        sendJson(res, 400, { error: true, reason: "Parameter 'latitude' is missing" });
        return;
      }
      sendJson(res, 200, forecast(Number(url.searchParams.get("forecast_days") ?? 7)));
    } else {
      res.writeHead(404).end();
    }
  });
  const { tools, errors } = await loadHttpTools([shippedHttpToolsDir()], {
    OPEN_METEO_GEOCODING_URL: `${server.base}/v1/search`,
    OPEN_METEO_FORECAST_URL: `${server.base}/v1/forecast`,
  });
  expect(errors).toEqual([]);
  weather = tools.find((t) => t.name === "weather")!;
});

afterAll(async () => {
  await server.close();
});

describe("the shipped weather tool", () => {
  it("is a valid definition at the package root", () => {
    expect(shippedHttpToolsDir()).toBe(`${join(projectRoot, "tools", "http")}/`);
    const json = JSON.parse(readFileSync(join(projectRoot, "tools/http/weather.json"), "utf8")) as unknown;
    const checked = checkHttpToolDefinition(json);
    expect(checked.ok).toBe(true);
    if (checked.ok)
      expect(checked.tool.envNames.sort()).toEqual(["OPEN_METEO_FORECAST_URL", "OPEN_METEO_GEOCODING_URL"]);
    expect(weather.parameters.required).toEqual(["location"]);
  });

  it("geocodes the place, then asks for the forecast at its coordinates", async () => {
    const before = server.requests.length;
    const result = await callTool(weather, { location: "Berlin" }, makeContext(true));
    expect(result.isError).toBeFalsy();
    const [geo, fc] = server.requests.slice(before).map((r) => new URL(r.url, "http://x"));
    expect(geo?.pathname).toBe("/v1/search");
    expect(Object.fromEntries(geo!.searchParams)).toEqual({
      name: "Berlin",
      language: "en",
      count: "1",
      format: "json",
    });
    expect(fc?.pathname).toBe("/v1/forecast");
    expect(fc?.searchParams.get("latitude")).toBe("52.52437");
    expect(fc?.searchParams.get("longitude")).toBe("13.41053");
    expect(fc?.searchParams.get("forecast_days")).toBe("3");
    expect(fc?.searchParams.get("temperature_unit")).toBe("celsius");
    expect(fc?.searchParams.get("timezone")).toBe("auto");

    const body = JSON.parse(textOf(result)) as Record<string, unknown>;
    expect(body).toMatchObject({
      place: "Berlin",
      region: "State of Berlin",
      country: "Germany",
      timezone: "Europe/Berlin",
      current: { temperature_2m: 22.4, weather_code: 2 },
      current_units: { temperature_2m: "°C" },
    });
    expect((body.daily as { time: string[] }).time).toHaveLength(3);
  });

  it("passes days, units and a country filter through", async () => {
    const before = server.requests.length;
    const result = await callTool(
      weather,
      { location: "Berlin", days: 5, units: "fahrenheit", countryCode: "DE" },
      makeContext(true),
    );
    expect(result.isError).toBeFalsy();
    const [geo, fc] = server.requests.slice(before).map((r) => new URL(r.url, "http://x"));
    expect(geo?.searchParams.get("countryCode")).toBe("DE");
    expect(fc?.searchParams.get("forecast_days")).toBe("5");
    expect(fc?.searchParams.get("temperature_unit")).toBe("fahrenheit");
    expect((JSON.parse(textOf(result)) as { daily: { time: string[] } }).daily.time).toHaveLength(5);
  });

  it("says so when the place is unknown, without asking for a forecast", async () => {
    const before = server.requests.length;
    const result = await callTool(weather, { location: "Nowhereville" }, makeContext(true));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('No place called "Nowhereville" was found');
    expect(server.requests.length).toBe(before + 1);
  });

  it("rejects arguments outside the schema", async () => {
    const result = await callTool(weather, { location: "Berlin", days: 40 }, makeContext(true));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/`days` must be <= 16/);
  });
});
