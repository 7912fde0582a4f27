package socrata

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dataset is one Discovery API result.
type Dataset struct {
	ID          string
	Name        string
	Description string
	Category    string // the portal's category (domain_category), else the first shared category
	Type        string // "dataset", "map", …
	UpdatedAt   time.Time
	Permalink   string
	Link        string
	Columns     []string // field names
	Domain      string   // the portal that publishes it (metadata.domain)
}

// DefaultLimit is the number of Discovery results asked for when a limit is 0.
const DefaultLimit = 10

// Search runs a full-text search of the portal's datasets (Discovery API,
// q=query) and returns at most limit results (DefaultLimit when limit is 0),
// best match first.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]Dataset, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("socrata: Search: query is empty; give words to search for")
	}
	v, err := c.catalogParams("Search", limit)
	if err != nil {
		return nil, err
	}
	v.Set("q", query)
	return c.catalog(ctx, v)
}

// List returns the portal's datasets, most recently updated first, only those
// of category when it is not empty, at most limit (DefaultLimit when 0).
func (c *Client) List(ctx context.Context, category string, limit int) ([]Dataset, error) {
	v, err := c.catalogParams("List", limit)
	if err != nil {
		return nil, err
	}
	if category = strings.TrimSpace(category); category != "" {
		v.Set("categories", category)
	}
	v.Set("order", "updatedAt")
	ds, err := c.catalog(ctx, v)
	if err != nil {
		return nil, err
	}
	// The API orders dates newest first; make sure of it.
	slices.SortStableFunc(ds, func(a, b Dataset) int { return cmp.Compare(b.UpdatedAt.UnixNano(), a.UpdatedAt.UnixNano()) })
	return ds, nil
}

func (c *Client) catalogParams(op string, limit int) (url.Values, error) {
	if limit < 0 {
		return nil, fmt.Errorf("socrata: %s: limit is %d; want 0 (the default, %d) or more", op, limit, DefaultLimit)
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	// search_context with domains: "Discovery scoped to data.sf.gov
	// needs search_context" (domains=data.sf.gov alone returned 4 of 666,
	// evidence discovery-search-context).
	domain := c.domain
	v := url.Values{}
	v.Set("domains", domain)
	v.Set("search_context", domain)
	v.Set("only", "dataset")
	v.Set("limit", strconv.Itoa(limit))
	return v, nil
}

func (c *Client) catalog(ctx context.Context, v url.Values) ([]Dataset, error) {
	var resp catalogResponse
	if err := c.getJSON(ctx, "catalog", c.discovery+"/api/catalog/v1?"+v.Encode(), &resp); err != nil {
		return nil, err
	}
	out := make([]Dataset, 0, len(resp.Results))
	for _, r := range resp.Results {
		out = append(out, r.dataset().Dataset)
	}
	return out, nil
}

// SearchPortals runs a full-text search over several portals' datasets
// (Discovery API, q=query, domains=the list), or over every portal the
// Discovery API knows when domains is empty, and returns at most limit
// results (DefaultLimit when 0), best match first. Each result's Domain
// says which portal publishes it. The domains are sent as given: check
// them with CheckDomain first.
func (c *Client) SearchPortals(ctx context.Context, query string, domains []string, limit int) ([]Dataset, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("socrata: SearchPortals: query is empty; give words to search for")
	}
	v, err := c.catalogParams("SearchPortals", limit)
	if err != nil {
		return nil, err
	}
	v.Del("search_context")
	v.Del("domains")
	if len(domains) > 0 {
		v.Set("domains", strings.Join(domains, ","))
	}
	v.Set("q", query)
	return c.catalog(ctx, v)
}

// CatalogDomain is one entry of the Discovery API's domain list: a portal's
// domain and how many datasets it publishes.
type CatalogDomain struct {
	Domain string
	Count  int // the datasets (and other assets) it publishes
}

// CatalogDomains returns the Discovery API's domain list, the portals it knows
// (/api/catalog/v1/domains), most datasets first, only=dataset counting
// datasets alone.
func (c *Client) CatalogDomains(ctx context.Context) ([]CatalogDomain, error) {
	var resp struct {
		Results []struct {
			Domain string `json:"domain"`
			Count  int    `json:"count"`
		} `json:"results"`
	}
	v := url.Values{"only": {"dataset"}}
	if err := c.getJSON(ctx, "catalog", c.discovery+"/api/catalog/v1/domains?"+v.Encode(), &resp); err != nil {
		return nil, err
	}
	out := make([]CatalogDomain, 0, len(resp.Results))
	for _, r := range resp.Results {
		if r.Domain != "" {
			out = append(out, CatalogDomain{Domain: r.Domain, Count: r.Count})
		}
	}
	slices.SortStableFunc(out, func(a, b CatalogDomain) int { return cmp.Compare(b.Count, a.Count) })
	return out, nil
}
