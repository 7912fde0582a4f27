package socrata

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// CatalogDataset is one dataset of a portal's whole catalog (AllDatasets):
// the Discovery result with what a search ranks by besides the Dataset's
// fields.
type CatalogDataset struct {
	Dataset
	Attribution string   // the publishing department
	Tags        []string // the portal's tags, then the shared ones
	// ColumnNames and ColumnDescriptions are the columns' display names
	// and descriptions, in the order of Dataset.Columns (field names).
	ColumnNames        []string
	ColumnDescriptions []string
	PageViews          int64 // page_views_total
	Downloads          int64 // download_count
}

// AllDatasetsOptions bounds AllDatasets. The zero value means the defaults.
type AllDatasetsOptions struct {
	// PageSize is the datasets asked for per request (default 1000, at
	// most 10000, the Discovery API's limit).
	PageSize int
	// Max is the most datasets returned (default 20,000); the sequence
	// stops there, the portal's catalog being larger.
	Max int
}

// catalogResponse is a Discovery API answer (Search reads a part of it).
type catalogResponse struct {
	Results []struct {
		Resource struct {
			ID                 string   `json:"id"`
			Name               string   `json:"name"`
			Description        string   `json:"description"`
			Attribution        string   `json:"attribution"`
			Type               string   `json:"type"`
			UpdatedAt          string   `json:"updatedAt"`
			DataUpdatedAt      string   `json:"data_updated_at"`
			ColumnsName        []string `json:"columns_name"`
			ColumnsFieldName   []string `json:"columns_field_name"`
			ColumnsDescription []string `json:"columns_description"`
			PageViews          struct {
				Total float64 `json:"page_views_total"`
			} `json:"page_views"`
			DownloadCount float64 `json:"download_count"`
		} `json:"resource"`
		Classification struct {
			Categories     []string `json:"categories"`
			Tags           []string `json:"tags"`
			DomainCategory string   `json:"domain_category"`
			DomainTags     []string `json:"domain_tags"`
		} `json:"classification"`
		Metadata struct {
			Domain string `json:"domain"`
		} `json:"metadata"`
		Permalink string `json:"permalink"`
		Link      string `json:"link"`
	} `json:"results"`
	ResultSetSize int `json:"resultSetSize"`
}

// AllDatasets pages through every dataset the portal publishes (Discovery
// API, domains and search_context = the client's domain, only=dataset,
// ordered by id so that pages neither overlap nor skip), lazily: each page
// is fetched when the previous one is used up, ctx is checked before each
// request, an error is yielded once and ends the sequence, and nothing is
// fetched after the caller stops.
func (c *Client) AllDatasets(ctx context.Context, opts AllDatasetsOptions) iter.Seq2[CatalogDataset, error] {
	size := cmp.Or(opts.PageSize, 1000)
	size = min(max(size, 1), 10000)
	limit := cmp.Or(opts.Max, 20000)
	return func(yield func(CatalogDataset, error) bool) {
		n := 0
		for offset := 0; n < limit; offset += size {
			if err := ctx.Err(); err != nil {
				yield(CatalogDataset{}, err)
				return
			}
			// The portal's current name, after a move (as catalogParams).
			domain := c.target().domain
			v := url.Values{}
			v.Set("domains", domain)
			v.Set("search_context", domain)
			v.Set("only", "dataset")
			v.Set("order", "dataset_id")
			v.Set("limit", strconv.Itoa(min(size, limit-n)))
			v.Set("offset", strconv.Itoa(offset))
			var resp catalogResponse
			if err := c.getJSON(ctx, "catalog", c.discovery+"/api/catalog/v1?"+v.Encode(), &resp); err != nil {
				yield(CatalogDataset{}, fmt.Errorf("socrata: AllDatasets: page at offset %d: %w", offset, err))
				return
			}
			for _, r := range resp.Results {
				d := CatalogDataset{
					Dataset: Dataset{
						ID: r.Resource.ID, Name: r.Resource.Name, Description: r.Resource.Description, Type: r.Resource.Type,
						Permalink: r.Permalink, Link: r.Link, Columns: r.Resource.ColumnsFieldName,
						Category: r.Classification.DomainCategory, Domain: r.Metadata.Domain,
					},
					Attribution:        r.Resource.Attribution,
					Tags:               append(append([]string(nil), r.Classification.DomainTags...), r.Classification.Tags...),
					ColumnNames:        r.Resource.ColumnsName,
					ColumnDescriptions: r.Resource.ColumnsDescription,
					PageViews:          int64(r.Resource.PageViews.Total),
					Downloads:          int64(r.Resource.DownloadCount),
				}
				if d.Category == "" && len(r.Classification.Categories) > 0 {
					d.Category = r.Classification.Categories[0]
				}
				for _, s := range []string{r.Resource.DataUpdatedAt, r.Resource.UpdatedAt} {
					if t, err := time.Parse(time.RFC3339, s); err == nil {
						d.UpdatedAt = t
						break
					}
				}
				n++
				if !yield(d, nil) {
					return
				}
				if n >= limit {
					return
				}
			}
			if len(resp.Results) < size {
				return
			}
		}
	}
}
