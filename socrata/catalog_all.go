package socrata

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
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
	// FailPastMax makes a portal that says (resultSetSize) it has more
	// than Max datasets an ErrTooManyDatasets at the first page, instead
	// of its first Max datasets.
	FailPastMax bool
}

// catalogResponse is a Discovery API answer (Search reads a part of it).
type catalogResponse struct {
	Results       []catalogResult `json:"results"`
	ResultSetSize int             `json:"resultSetSize"`
}

// catalogResult is one dataset of a Discovery API answer.
type catalogResult struct {
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
}

// dataset is r as a CatalogDataset: the category is the domain's, else the
// first of Socrata's; the update time is the data's, else the metadata's.
func (r catalogResult) dataset() CatalogDataset {
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
	return d
}

// ErrTooManyDatasets is AllDatasets' error with FailPastMax, before any
// request past the first, when the portal says (resultSetSize) it has more
// datasets than AllDatasetsOptions.Max.
var ErrTooManyDatasets = errors.New("the portal has more datasets than asked for")

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
			v, err := c.catalogParams("AllDatasets", min(size, limit-n))
			if err != nil {
				yield(CatalogDataset{}, err)
				return
			}
			v.Set("order", "dataset_id")
			v.Set("offset", strconv.Itoa(offset))
			var resp catalogResponse
			if err := c.getJSON(ctx, "catalog", c.discovery+"/api/catalog/v1?"+v.Encode(), &resp); err != nil {
				yield(CatalogDataset{}, fmt.Errorf("socrata: AllDatasets: page at offset %d: %w", offset, err))
				return
			}
			if opts.FailPastMax && offset == 0 && resp.ResultSetSize > limit {
				yield(CatalogDataset{}, fmt.Errorf("socrata: AllDatasets: %d datasets, more than %d: %w", resp.ResultSetSize, limit, ErrTooManyDatasets))
				return
			}
			for _, r := range resp.Results {
				d := r.dataset()
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
